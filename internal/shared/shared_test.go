package shared_test

import (
	"context"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/shared"
	"github.com/quarrydb/quarry/internal/shared/redistest"
)

func TestRedisKV(t *testing.T) {
	ctx := context.Background()
	kv, err := shared.OpenRedis(ctx, redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, ok, err := kv.Get(ctx, "missing", 0); ok || err != nil {
		t.Fatalf("missing key: ok %v err %v", ok, err)
	}
	// TTLs with room for a loaded machine: each sliding Get comes 300 ms
	// after the last (a 1 s TTL leaves 700 ms of slack; 150 ms of a 300 ms
	// one failed in CI at load 8).
	if err := kv.Set(ctx, "k", []byte("v1"), time.Second); err != nil {
		t.Fatal(err)
	}
	// A sliding Get keeps the key alive past its first expiry.
	for range 5 {
		time.Sleep(300 * time.Millisecond)
		v, ok, err := kv.Get(ctx, "k", time.Second)
		if err != nil || !ok || string(v) != "v1" {
			t.Fatalf("sliding get: %q %v %v", v, ok, err)
		}
	}
	// A plain Get does not extend it.
	time.Sleep(1300 * time.Millisecond)
	if _, ok, _ := kv.Get(ctx, "k", 0); ok {
		t.Fatal("key outlived its expiry")
	}
	if err := kv.Set(ctx, "d", []byte("x"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := kv.Del(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if err := kv.Del(ctx, "d"); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if _, ok, _ := kv.Get(ctx, "d", 0); ok {
		t.Fatal("deleted key still there")
	}
}

func TestOpenRedisErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := shared.OpenRedis(ctx, "http://nope"); err == nil {
		t.Fatal("a non-redis URL was accepted")
	}
	if _, err := shared.OpenRedis(ctx, "redis://127.0.0.1:1/0"); err == nil {
		t.Fatal("an unreachable server was accepted")
	}
}
