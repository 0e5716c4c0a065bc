// Package config reads kubegap's config file: which checks to run, when to
// fail, the minimum severity, the output format, the suppressions and where
// case links point. It is
// found with --config, else as .kubegap.yaml in the working directory or
// the nearest parent (as .golangci.yml and .editorconfig are), else as
// $XDG_CONFIG_HOME/kubegap/config.yaml. Unknown keys are an error naming
// the key, so a typo never silently does nothing.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"go.yaml.in/yaml/v3"

	"github.com/kubegap/kubegap/internal/suppress"
)

// FileName is the per-repository config file looked up from the working
// directory upward.
const FileName = ".kubegap.yaml"

// File is the config file. Flags given on the command line win over it.
type File struct {
	Checks       []string        `yaml:"checks"`
	SkipChecks   []string        `yaml:"skip-checks"`
	FailOn       string          `yaml:"fail-on"`
	MinSeverity  string          `yaml:"min-severity"`
	Output       string          `yaml:"output"`
	Suppressions []suppress.Rule `yaml:"suppressions"`
	// IgnoreProviderOwned is --ignore-provider-owned; nil when not set.
	IgnoreProviderOwned *bool `yaml:"ignore-provider-owned"`
	// CaseBaseURL is --case-base-url: where case links point.
	CaseBaseURL string `yaml:"case-base-url"`

	// Path is where the file was read from; empty when none was found.
	Path string `yaml:"-"`
}

// Find returns the config file to read: explicit if given (it must exist),
// else the nearest .kubegap.yaml from dir upward, else the user's
// config.yaml; "" when there is none.
func Find(explicit, dir string, getenv func(string) string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("--config: %w", err)
		}
		return explicit, nil
	}
	for d := dir; d != ""; {
		p := filepath.Join(d, FileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		if home := getenv("HOME"); home != "" {
			base = filepath.Join(home, ".config")
		}
	}
	if base != "" {
		p := filepath.Join(base, "kubegap", "config.yaml")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return "", nil
}

// Load reads and checks a config file; "" gives an empty config.
func Load(path string) (*File, error) {
	if path == "" {
		return &File{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type \S+`)

// Parse reads a config file's text strictly.
func Parse(b []byte) (*File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && err != io.EOF {
		if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("line %s: unknown key %q", m[1], m[2])
		}
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	return &f, nil
}
