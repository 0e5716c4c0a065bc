package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const full = `
checks: [version-skew, node-os-lifecycle]
skip-checks: [version-skew]
fail-on: medium
min-severity: low
output: sarif
suppressions:
  - check: node-os-lifecycle
    kind: Node
    labels: pool=legacy
    reason: retired in Q1
    expires: 2027-03-31
`

func TestParse(t *testing.T) {
	f, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Checks) != 2 || f.SkipChecks[0] != "version-skew" || f.FailOn != "medium" || f.MinSeverity != "low" ||
		f.Output != "sarif" || len(f.Suppressions) != 1 || f.Suppressions[0].Labels != "pool=legacy" ||
		f.Suppressions[0].Expires != "2027-03-31" {
		t.Errorf("parsed %+v", f)
	}
	for text, want := range map[string]string{
		"fail-on: high\ncolour: always\n":                           `line 2: unknown key "colour"`,
		"suppressions:\n  - check: x\n    reason: y\n    nmae: z\n": `line 4: unknown key "nmae"`,
		"checks: [a\n": "malformed YAML",
	} {
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %s", text, err, want)
		}
	}
	if f, err := Parse(nil); err != nil || f.FailOn != "" {
		t.Errorf("empty file: %v", err)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	os.MkdirAll(deep, 0o755)
	xdg := filepath.Join(root, "xdg")
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	if p, err := Find("", deep, env); err != nil || p != "" {
		t.Errorf("nothing to find: %q %v", p, err)
	}
	os.MkdirAll(filepath.Join(xdg, "kubegap"), 0o755)
	user := filepath.Join(xdg, "kubegap", "config.yaml")
	os.WriteFile(user, nil, 0o644)
	if p, _ := Find("", deep, env); p != user {
		t.Errorf("user config: %q", p)
	}
	repo := filepath.Join(root, "a", FileName)
	os.WriteFile(repo, nil, 0o644)
	if p, _ := Find("", deep, env); p != repo {
		t.Errorf("nearest parent: %q", p)
	}
	if p, _ := Find(user, deep, env); p != user {
		t.Errorf("explicit: %q", p)
	}
	if _, err := Find(filepath.Join(root, "nope.yaml"), deep, env); err == nil {
		t.Error("a missing --config file is not an error")
	}
}
