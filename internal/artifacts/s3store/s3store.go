// Package s3store keeps Quarry's artifacts in an S3-compatible object
// store (AWS S3, MinIO, Ceph RGW, Cloudflare R2, GCS's XML API, ...): the
// artifacts.Remote that `serve --artifact-store s3://bucket/prefix` uses,
// over the MinIO Go client (github.com/minio/minio-go/v7).
//
// Objects are named <prefix>/<id>.<ext>. The owner (principal) and the
// commit time of an artifact travel in the object's user metadata
// (x-amz-meta-quarry-owner, x-amz-meta-quarry-created), so any replica
// enforces the owner binding from the object itself. Uploads are single
// PUTs or multipart uploads: either way an object becomes visible only
// when complete, and a failed multipart upload is aborted (its parts
// deleted).
//
// Credentials come from the usual AWS places, in order: the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the shared
// credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials,
// profile AWS_PROFILE or default: aws_access_key_id,
// aws_secret_access_key, aws_session_token), then the instance or
// container role (EC2/ECS metadata, EKS web identity). No credentials at
// all means anonymous requests.
package s3store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/quarrydb/quarry/internal/artifacts"
)

// Metadata keys (x-amz-meta-...), as the client returns them.
const (
	metaOwner   = "Quarry-Owner"
	metaCreated = "Quarry-Created"
)

// partSize is the multipart part size: objects of more bytes are uploaded
// in parts of this size (S3's minimum part is 5 MiB).
const partSize = 16 << 20

// Options configure Open.
type Options struct {
	// URL is the store, s3://bucket[/prefix].
	URL string
	// Endpoint is the S3 endpoint: a URL (http://host:port for a local
	// MinIO; https://... ) or a host[:port] (HTTPS). "" means
	// $AWS_ENDPOINT_URL_S3, then $AWS_ENDPOINT_URL, then AWS S3.
	Endpoint string
	// Region is the bucket's region; "" means $AWS_REGION, then
	// $AWS_DEFAULT_REGION, then the store is asked.
	Region string
	// Getenv reads the environment (for tests); nil means os.Getenv.
	Getenv func(string) string
	// Transport is the HTTP transport; nil means the client's default.
	Transport http.RoundTripper
	// MaxRetries bounds the retries of a failed request; 0 means 2.
	MaxRetries int
}

// Store is an artifacts.Remote over one bucket prefix.
type Store struct {
	c      *minio.Client
	bucket string
	prefix string // "" or ending in "/"
	loc    string // s3://bucket/prefix
}

var _ artifacts.Remote = (*Store)(nil)

// ParseURL splits s3://bucket[/prefix] into its bucket and prefix ("" or
// ending in "/").
func ParseURL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%q is not an object store URL: want s3://bucket/prefix", raw)
	}
	p := strings.Trim(u.Path, "/")
	if p != "" {
		if path.Clean(p) != p || strings.Contains(p, "//") {
			return "", "", fmt.Errorf("%q: the prefix must be a clean path (no ., .., or //)", raw)
		}
		p += "/"
	}
	return u.Host, p, nil
}

// Open connects to the store (no request is made: see Check).
func Open(opts Options) (*Store, error) {
	bucket, prefix, err := ParseURL(opts.URL)
	if err != nil {
		return nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	endpoint := firstOf(opts.Endpoint, getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"), "s3.amazonaws.com")
	host, secure, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	region := firstOf(opts.Region, getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
	retries := opts.MaxRetries
	if retries <= 0 {
		retries = 2
	}
	c, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: region, Transport: opts.Transport,
		MaxRetries: retries})
	if err != nil {
		return nil, fmt.Errorf("object store endpoint %q: %w", endpoint, err)
	}
	loc := "s3://" + bucket + "/" + prefix
	return &Store{c: c, bucket: bucket, prefix: prefix, loc: strings.TrimSuffix(loc, "/")}, nil
}

// parseEndpoint turns an endpoint URL or host[:port] into the client's
// host and TLS setting.
func parseEndpoint(e string) (host string, secure bool, err error) {
	if !strings.Contains(e, "://") {
		return e, true, nil
	}
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", false, fmt.Errorf("object store endpoint %q: want http(s)://host[:port] or host[:port]", e)
	}
	return u.Host, u.Scheme == "https", nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// Location implements artifacts.Remote.
func (s *Store) Location() string { return s.loc }

func (s *Store) key(name string) string { return s.prefix + name }

// notFound reports whether err says the object (or bucket) is missing.
func notFound(err error) bool {
	switch minio.ToErrorResponse(err).Code {
	case "NoSuchKey", "NotFound":
		return true
	}
	return false
}

// wrap makes a missing object fs.ErrNotExist.
func wrap(err error, name string) error {
	if err == nil {
		return nil
	}
	if notFound(err) {
		return fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return err
}

// Put implements artifacts.Remote.
func (s *Store) Put(ctx context.Context, name string, r io.Reader, size int64, info artifacts.ObjectInfo) error {
	meta := map[string]string{
		metaOwner:   encodeOwner(info.Owner),
		metaCreated: info.Created.UTC().Format(time.RFC3339Nano),
	}
	// Content-MD5 on every request (each part is read whole first to
	// compute it): a reader failing midway never sends its part, and the
	// store rejects a truncated or corrupted body. The payload is then not
	// signed again (UNSIGNED-PAYLOAD rather than aws-chunked streaming
	// signatures, which not every S3-compatible server decodes).
	_, err := s.c.PutObject(ctx, s.bucket, s.key(name), r, size, minio.PutObjectOptions{
		UserMetadata: meta, ContentType: artifacts.MIMEFor(path.Ext(name)[1:]), PartSize: partSize,
		SendContentMd5: true, DisableContentSha256: true})
	if err != nil {
		// A failed multipart upload leaves invisible parts: abort it (best
		// effort; a bucket lifecycle rule cleans up after a crash).
		actx, cancel := context.WithTimeout(context.Background(), artifacts.RemoteOpTimeout)
		defer cancel()
		_ = s.c.RemoveIncompleteUpload(actx, s.bucket, s.key(name))
		return err
	}
	return nil
}

// encodeOwner makes a principal safe for a metadata header (never empty:
// some stores drop empty values).
func encodeOwner(owner string) string {
	return "o" + base64.RawURLEncoding.EncodeToString([]byte(owner))
}

func decodeOwner(v string) (string, bool) {
	rest, ok := strings.CutPrefix(v, "o")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	return string(b), err == nil
}

// Stat implements artifacts.Remote. An object without Quarry's metadata
// is reported missing: it is not an artifact.
func (s *Store) Stat(ctx context.Context, name string) (artifacts.ObjectInfo, error) {
	oi, err := s.c.StatObject(ctx, s.bucket, s.key(name), minio.StatObjectOptions{})
	if err != nil {
		return artifacts.ObjectInfo{}, wrap(err, name)
	}
	owner, ok := decodeOwner(metaValue(oi.UserMetadata, metaOwner))
	created, err := time.Parse(time.RFC3339Nano, metaValue(oi.UserMetadata, metaCreated))
	if !ok || err != nil {
		return artifacts.ObjectInfo{}, fmt.Errorf("%s has no Quarry metadata: %w", name, fs.ErrNotExist)
	}
	return artifacts.ObjectInfo{Name: name, Size: oi.Size, Created: created, Owner: owner}, nil
}

// metaValue finds a user metadata value whatever the case of its key.
func metaValue(m map[string]string, key string) string {
	for k, v := range m {
		if strings.EqualFold(k, key) || strings.EqualFold(k, "X-Amz-Meta-"+key) {
			return v
		}
	}
	return ""
}

// ReadAt implements artifacts.Remote with one ranged GET.
func (s *Store) ReadAt(ctx context.Context, name string, p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var o minio.GetObjectOptions
	if err := o.SetRange(off, off+int64(len(p))-1); err != nil {
		return 0, err
	}
	obj, err := s.c.GetObject(ctx, s.bucket, s.key(name), o)
	if err != nil {
		return 0, wrap(err, name)
	}
	defer obj.Close()
	n, err := io.ReadFull(obj, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, wrap(err, name)
}

// Delete implements artifacts.Remote.
func (s *Store) Delete(ctx context.Context, name string) error {
	err := s.c.RemoveObject(ctx, s.bucket, s.key(name), minio.RemoveObjectOptions{})
	if notFound(err) {
		return nil
	}
	return err
}

// List implements artifacts.Remote: the objects directly under the
// prefix, with their upload times as Created.
func (s *Store) List(ctx context.Context, fn func(artifacts.ObjectInfo) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for oi := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix}) {
		if oi.Err != nil {
			return oi.Err
		}
		name := strings.TrimPrefix(oi.Key, s.prefix)
		if name == "" || strings.Contains(name, "/") {
			continue
		}
		if err := fn(artifacts.ObjectInfo{Name: name, Size: oi.Size, Created: oi.LastModified}); err != nil {
			return err
		}
	}
	return nil
}

// Check implements artifacts.Remote: the bucket must exist and answer.
func (s *Store) Check(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("bucket %q does not exist", s.bucket)
	}
	return nil
}
