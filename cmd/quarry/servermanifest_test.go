package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// serverManifest is the part of the MCP registry's server.json format
// (schema 2025-12-11) that Quarry's ../../server.json uses; decoding it
// with unknown fields refused catches a misspelled key.
type serverManifest struct {
	Schema      string `json:"$schema"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Repository  struct {
		URL    string `json:"url"`
		Source string `json:"source"`
	} `json:"repository"`
	Version  string `json:"version"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
		Transport    struct {
			Type string `json:"type"`
		} `json:"transport"`
		RuntimeHint          string             `json:"runtimeHint"`
		RuntimeArguments     []manifestArgument `json:"runtimeArguments"`
		PackageArguments     []manifestArgument `json:"packageArguments"`
		EnvironmentVariables []manifestInput    `json:"environmentVariables"`
	} `json:"packages"`
}

// manifestInput is the format's Input (with a name for KeyValueInput).
type manifestInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	IsRequired  bool     `json:"isRequired"`
	Format      string   `json:"format"`
	Value       string   `json:"value"`
	Default     string   `json:"default"`
	Choices     []string `json:"choices"`
}

// manifestArgument is a positional or named argument.
type manifestArgument struct {
	Type        string                   `json:"type"`
	Name        string                   `json:"name"`
	Value       string                   `json:"value"`
	IsRequired  bool                     `json:"isRequired"`
	Variables   map[string]manifestInput `json:"variables"`
	Description string                   `json:"description"`
}

const manifestSchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

func readManifest(t *testing.T) serverManifest {
	t.Helper()
	data, err := os.ReadFile("../../server.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m serverManifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("server.json: %v", err)
	}
	return m
}

// TestServerManifest checks server.json (the MCP registry entry) against
// the format's rules and against the facts it states: the name is the
// GitHub namespace of the Go module, the container image's label names the
// same server, its tag is the version, the arguments start the stdio
// server on the image's data volume, and every environment variable is a
// QUARRY_* setting of `quarry serve` whose default is the one listed
// (checked through --print-config).
func TestServerManifest(t *testing.T) {
	m := readManifest(t)
	if m.Schema != manifestSchema {
		t.Errorf("$schema %q, want %q", m.Schema, manifestSchema)
	}
	// The format's own rules (name pattern and length, description length,
	// an exact version).
	if !regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`).MatchString(m.Name) || len(m.Name) < 3 || len(m.Name) > 200 {
		t.Errorf("name %q: reverse-DNS namespace/name", m.Name)
	}
	if n := len(m.Description); n == 0 || n > 100 {
		t.Errorf("description is %d bytes, want 1..100", n)
	}
	semver := regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	if !semver.MatchString(m.Version) {
		t.Errorf("version %q: an exact semantic version", m.Version)
	}
	// Released versions are headed "## X.Y.Z" in CHANGELOG.md: the newest
	// is the manifest's. Before the first release the manifest names the
	// version to be tagged first.
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if g := regexp.MustCompile(`(?m)^## \[?v?(\d+\.\d+\.\d+[^\]\s]*)`).FindSubmatch(changelog); g != nil && string(g[1]) != m.Version {
		t.Errorf("version %q, CHANGELOG.md's newest release is %s", m.Version, g[1])
	}

	// The name is io.github.<owner>/<repo> of the module path.
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module := regexp.MustCompile(`(?m)^module (\S+)`).FindSubmatch(gomod)
	owner, repo, ok := strings.Cut(strings.TrimPrefix(string(module[1]), "github.com/"), "/")
	if !ok {
		t.Fatalf("module %s is not on GitHub", module[1])
	}
	if want := "io.github." + owner + "/" + repo; m.Name != want {
		t.Errorf("name %q, want %q (the module's GitHub namespace)", m.Name, want)
	}
	if m.Repository.URL != "https://"+string(module[1]) || m.Repository.Source != "github" {
		t.Errorf("repository %+v, want https://%s on github", m.Repository, module[1])
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dockerfile, []byte(`LABEL io.modelcontextprotocol.server.name="`+m.Name+`"`)) {
		t.Errorf("the Dockerfile has no LABEL io.modelcontextprotocol.server.name=%q (the registry's ownership check)", m.Name)
	}

	if len(m.Packages) == 0 {
		t.Fatal("no packages")
	}
	for _, p := range m.Packages {
		if p.RegistryType != "oci" || p.Identifier != "ghcr.io/"+owner+"/"+repo+":"+m.Version {
			t.Errorf("package %s %s, want the oci image tagged with the version %s", p.RegistryType, p.Identifier, m.Version)
		}
		if p.Transport.Type != "stdio" || p.RuntimeHint != "docker" {
			t.Errorf("package transport %q runtime %q, want stdio under docker", p.Transport.Type, p.RuntimeHint)
		}
		// docker run --mount ...,dst=/data,readonly IMAGE serve --data /data
		var args []string
		for _, a := range p.PackageArguments {
			if a.Type == "named" {
				args = append(args, a.Name)
			}
			args = append(args, a.Value)
		}
		if !slices.Equal(args, []string{"serve", "--data", "/data"}) {
			t.Errorf("package arguments %q, want serve --data /data", args)
		}
		mount := false
		for _, a := range p.RuntimeArguments {
			if a.Name == "--mount" && strings.Contains(a.Value, "dst=/data,readonly") && a.Variables["data_dir"].Format == "filepath" {
				mount = true
			}
		}
		if !mount || !strings.Contains(string(dockerfile), `VOLUME ["/data"`) {
			t.Errorf("runtime arguments %+v: want the data folder mounted read-only at the image's /data volume", p.RuntimeArguments)
		}

		// Every variable is a serve setting whose default is the one listed,
		// and setting it is seen by serve.
		out, stderr, code := printConfig(t)
		if code != 0 {
			t.Fatalf("print-config: %d %s", code, stderr)
		}
		defaults := effective(t, out)
		for _, v := range p.EnvironmentVariables {
			flagName, ok := strings.CutPrefix(v.Name, envPrefix)
			flagName = strings.ReplaceAll(strings.ToLower(flagName), "_", "-")
			if !ok || envName(flagName) != v.Name || v.Description == "" {
				t.Errorf("environment variable %q: want %s<FLAG> with a description", v.Name, envPrefix)
				continue
			}
			d, ok := defaults[flagName]
			if !ok {
				t.Errorf("%s: serve has no --%s", v.Name, flagName)
				continue
			}
			if strings.Trim(d[0], `"`) != v.Default || d[1] != "default" {
				t.Errorf("%s: default %q, serve's is %s (%s)", v.Name, v.Default, d[0], d[1])
			}
			if len(v.Choices) > 0 && !slices.Contains(v.Choices, v.Default) {
				t.Errorf("%s: default %q not among the choices %v", v.Name, v.Default, v.Choices)
			}
			t.Setenv(v.Name, v.Default)
		}
		out, stderr, code = printConfig(t)
		if code != 0 {
			t.Fatalf("print-config with the manifest's variables: %d %s", code, stderr)
		}
		got := effective(t, out)
		for _, v := range p.EnvironmentVariables {
			flagName := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(v.Name, envPrefix)), "_", "-")
			if got[flagName][1] != "env "+v.Name {
				t.Errorf("--%s from %q with %s set, want env %s", flagName, got[flagName][1], v.Name, v.Name)
			}
		}
	}
}
