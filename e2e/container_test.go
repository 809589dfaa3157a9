package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// dockerfile is the repository's Dockerfile as instructions: each logical
// line (continuations joined) split into its keyword and the rest, grouped
// by stage.
func dockerfile(t *testing.T) [][][2]string {
	t.Helper()
	src, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages [][][2]string
	text := regexp.MustCompile(`\\\n`).ReplaceAllString(string(src), " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kw, rest, _ := strings.Cut(line, " ")
		kw = strings.ToUpper(kw)
		if kw == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			t.Fatalf("instruction before FROM: %q", line)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], [2]string{kw, strings.TrimSpace(rest)})
	}
	return stages
}

// TestDockerfileRules lints the Dockerfile (hadolint is not packaged for
// Debian): a multi-stage build from pinned images; apt without recommends
// and without leftover lists; the final stage runs as a non-root user,
// serves HTTP on 0.0.0.0 from a /data volume, and bakes in no token.
func TestDockerfileRules(t *testing.T) {
	stages := dockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("%d stages; want a build stage and a runtime stage", len(stages))
	}
	for _, st := range stages {
		for _, in := range st {
			kw, arg := in[0], in[1]
			switch kw {
			case "FROM":
				image := strings.Fields(arg)[0]
				if !strings.Contains(image, ":") || strings.HasSuffix(image, ":latest") {
					t.Errorf("FROM %s: pin a tag (DL3006/DL3007)", image)
				}
			case "RUN":
				if strings.Contains(arg, "apt-get install") && (!strings.Contains(arg, "--no-install-recommends") || !strings.Contains(arg, "-y")) {
					t.Errorf("RUN %s: apt-get install -y --no-install-recommends (DL3014/DL3015)", arg)
				}
				if strings.Contains(arg, "apt-get update") && !strings.Contains(arg, "rm -rf /var/lib/apt/lists") {
					t.Errorf("RUN %s: remove the apt lists in the same layer (DL3009)", arg)
				}
				if strings.Contains(arg, "sudo ") || strings.HasPrefix(arg, "cd ") {
					t.Errorf("RUN %s: no sudo, use WORKDIR (DL3004/DL3003)", arg)
				}
			case "ADD":
				t.Errorf("ADD %s: use COPY (DL3020)", arg)
			case "ENV", "ARG":
				if regexp.MustCompile(`(?i)token|secret|password`).MatchString(arg) {
					t.Errorf("%s %s: no secrets in the image", kw, arg)
				}
			}
		}
	}
	final := stages[len(stages)-1]
	get := func(kw string) []string {
		var out []string
		for _, in := range final {
			if in[0] == kw {
				out = append(out, in[1])
			}
		}
		return out
	}
	users := get("USER")
	if len(users) == 0 || slices.ContainsFunc(users, func(u string) bool { return u == "root" || strings.HasPrefix(u, "0") }) {
		t.Errorf("final stage USER %v: run as a non-root user", users)
	}
	if v := get("VOLUME"); len(v) != 1 || !strings.Contains(v[0], `"/data"`) {
		t.Errorf("VOLUME %v: want /data", v)
	}
	if c := get("COPY"); len(c) == 0 || !strings.HasPrefix(c[0], "--from=") {
		t.Errorf("final stage COPY %v: want the binary from the build stage", c)
	}
	cmd := containerCmd(t, final)
	if !slices.Contains(cmd, "0.0.0.0:8765") || !slices.Contains(cmd, "http") || !slices.Contains(cmd, "/data") {
		t.Errorf("CMD %v: want serve --transport http --addr 0.0.0.0:8765 --data /data", cmd)
	}
}

// containerCmd is the final stage's CMD (exec form).
func containerCmd(t *testing.T, final [][2]string) []string {
	t.Helper()
	for _, in := range final {
		if in[0] == "CMD" {
			var cmd []string
			if err := json.Unmarshal([]byte(in[1]), &cmd); err != nil {
				t.Fatalf("CMD %s: use the exec (JSON) form (DL3025): %v", in[1], err)
			}
			return cmd
		}
	}
	t.Fatal("no CMD")
	return nil
}

// TestContainerBuildSteps runs the Dockerfile's build step
// (scripts/container-build.sh) and then the binary as the container does:
// its CMD on 0.0.0.0 refuses to start without a token and serves with one
// (QUARRY_AUTH_TOKENS), the data mounted read-only.
func TestContainerBuildSteps(t *testing.T) {
	out := filepath.Join(t.TempDir(), "quarry")
	build := exec.Command("scripts/container-build.sh", out)
	build.Dir = ".."
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/container-build.sh: %v\n%s", err, b)
	}
	data := t.TempDir()
	writeBigCSV(t, filepath.Join(data, "big.csv"), 5, 0)
	if err := os.Chmod(data, 0o555); err != nil { // read-only, as mounted :ro
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(data, 0o755) })
	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	args := containerCmd(t, dockerfile(t)[len(dockerfile(t))-1])
	for i, a := range args {
		switch a {
		case "0.0.0.0:8765":
			args[i] = "0.0.0.0:" + port
		case "/data":
			args[i] = data
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	noToken := exec.CommandContext(ctx, out, args...)
	noToken.Env = append(env(), "QUARRY_AUTH_TOKENS=")
	if b, err := noToken.CombinedOutput(); err == nil || !strings.Contains(string(b), "token") {
		t.Fatalf("0.0.0.0 without a token: %v\n%s", err, b)
	}
	srv := exec.Command(out, args...)
	srv.Env = append(env(), "QUARRY_AUTH_TOKENS=container-token-0123456789abcdef", "XDG_CACHE_HOME="+t.TempDir())
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	base := "http://127.0.0.1:" + port
	waitHealthy(t, base+"/healthz")
	c := connectHTTP(t, base, map[string]string{"Authorization": "Bearer container-token-0123456789abcdef"}, false)
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if cat.Total != 1 || cat.Datasets[0].ID != "big" {
		t.Fatalf("catalog: %+v", cat)
	}
}
