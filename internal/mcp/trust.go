package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Trust is the person's consent to a project's servers, kept in rein's state directory (never in
// the project, which could grant itself consent): each file by its absolute path and the digest
// of the content that was trusted, so a changed file asks again.
type Trust struct {
	path string
}

// TrustAt keeps consent in dir (rein's state directory).
func TrustAt(dir string) Trust { return Trust{path: filepath.Join(dir, "mcp-trust.json")} }

func (t Trust) load() (map[string]string, error) {
	m := map[string]string{}
	data, err := os.ReadFile(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s does not read as rein's MCP consent file (%v); remove it and trust the projects again", t.path, err)
	}
	return m, nil
}

// Trusted says whether p, as it is now, has the person's consent.
func (t Trust) Trusted(p *Project) (bool, error) {
	m, err := t.load()
	if err != nil {
		return false, err
	}
	return m[p.Path] == p.Digest, nil
}

// Grant records consent to p as it is now, replacing any earlier consent to its file.
func (t Trust) Grant(p *Project) error {
	m, err := t.load()
	if err != nil {
		return err
	}
	m[p.Path] = p.Digest
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, t.path)
}
