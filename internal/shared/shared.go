package shared

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// KV is a key-value store with expiries shared by replicas. Implementations
// are safe for concurrent use.
type KV interface {
	// Set stores val under key for ttl (ttl > 0).
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Get returns the value under key and, when ttl > 0, restarts its
	// expiry at ttl (a sliding lifetime). ok is false when key does not
	// exist or expired.
	Get(ctx context.Context, key string, ttl time.Duration) (val []byte, ok bool, err error)
	// Del removes key; a missing key is not an error.
	Del(ctx context.Context, key string) error
	// Close releases the connections.
	Close() error
}

// Prefix is the prefix of every key Quarry writes.
const Prefix = "quarry:"

// OpTimeout bounds every call to the store: a stalled store fails the
// request that needs it rather than hanging it.
const OpTimeout = 2 * time.Second

// Redis is a KV over a Redis server (6.2 or later: Get uses GETEX).
type Redis struct {
	c *redis.Client
}

// OpenRedis connects to the Redis server named by url
// (redis://[user:password@]host:port[/db] or rediss:// for TLS, as
// go-redis's ParseURL reads it) and checks it answers.
func OpenRedis(ctx context.Context, url string) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = OpTimeout, OpTimeout, OpTimeout
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	return &Redis{c: c}, nil
}

// Set implements KV.
func (r *Redis) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	return r.c.Set(ctx, Prefix+key, val, ttl).Err()
}

// Get implements KV.
func (r *Redis) Get(ctx context.Context, key string, ttl time.Duration) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	var cmd *redis.StringCmd
	if ttl > 0 {
		cmd = r.c.GetEx(ctx, Prefix+key, ttl)
	} else {
		cmd = r.c.Get(ctx, Prefix+key)
	}
	b, err := cmd.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Del implements KV.
func (r *Redis) Del(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	return r.c.Del(ctx, Prefix+key).Err()
}

// Close implements KV.
func (r *Redis) Close() error { return r.c.Close() }
