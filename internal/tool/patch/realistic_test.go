package patch

import (
	"context"
	"maps"
	"testing"
)

// A patch of the shape OpenAI's coding models write in a session: several files, anchors naming
// the function a hunk is in, a hunk that ends the file, a move with a change, a new file and a
// deleted one, blank lines between hunks.
func TestRealisticPatch(t *testing.T) {
	before := map[string]string{
		"server/config.go": `package server

import "time"

// Config is the server's configuration.
type Config struct {
	Addr    string
	Timeout time.Duration
}

// Default returns the default configuration.
func Default() Config {
	return Config{
		Addr:    ":8080",
		Timeout: 30 * time.Second,
	}
}

func (c Config) Validate() error {
	return nil
}
`,
		"server/legacy.go": "package server\n\n// legacy code, unused\n",
		"cmd/main.go": `package main

import "example.com/app/server"

func main() {
	cfg := server.Default()
	run(cfg)
}
`,
	}
	patch := `*** Begin Patch
*** Update File: server/config.go
@@ type Config struct {
 	Addr    string
 	Timeout time.Duration
+	// MaxConns bounds the open connections (0: no bound).
+	MaxConns int
 }

@@ func Default() Config {
 	return Config{
-		Addr:    ":8080",
-		Timeout: 30 * time.Second,
+		Addr:     ":8080",
+		Timeout:  30 * time.Second,
+		MaxConns: 256,
 	}
@@
 func (c Config) Validate() error {
+	if c.MaxConns < 0 {
+		return errors.New("MaxConns must not be negative")
+	}
 	return nil
 }
*** End of File
*** Delete File: server/legacy.go
*** Update File: cmd/main.go
*** Move to: cmd/app/main.go
@@ func main() {
 	cfg := server.Default()
+	cfg.MaxConns = 64
 	run(cfg)
*** Add File: server/config_test.go
+package server
+
+import "testing"
+
+func TestDefaultValid(t *testing.T) {
+	if err := Default().Validate(); err != nil {
+		t.Fatal(err)
+	}
+}
*** End Patch
`
	files := &memFiles{files: maps.Clone(before)}
	p, err := Parse(patch)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := Apply(context.Background(), files, p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"server/config.go": `package server

import "time"

// Config is the server's configuration.
type Config struct {
	Addr    string
	Timeout time.Duration
	// MaxConns bounds the open connections (0: no bound).
	MaxConns int
}

// Default returns the default configuration.
func Default() Config {
	return Config{
		Addr:     ":8080",
		Timeout:  30 * time.Second,
		MaxConns: 256,
	}
}

func (c Config) Validate() error {
	if c.MaxConns < 0 {
		return errors.New("MaxConns must not be negative")
	}
	return nil
}
`,
		"cmd/app/main.go": `package main

import "example.com/app/server"

func main() {
	cfg := server.Default()
	cfg.MaxConns = 64
	run(cfg)
}
`,
		"server/config_test.go": "package server\n\nimport \"testing\"\n\nfunc TestDefaultValid(t *testing.T) {\n\tif err := Default().Validate(); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
	}
	for name, text := range want {
		if got := files.files[name]; got != text {
			t.Errorf("%s =\n%s\nwant\n%s", name, got, text)
		}
	}
	if len(files.files) != len(want) {
		t.Errorf("files = %v, want only %v", keys(files.files), keys(want))
	}
	if len(changes) != 4 || changes[2].Name != "cmd/app/main.go" || changes[2].From != "cmd/main.go" {
		t.Errorf("changes = %+v", changes)
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
