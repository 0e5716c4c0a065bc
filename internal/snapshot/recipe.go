package snapshot

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A recipe dump is what `kubegap recipe` tells kubectl to write: one file
// per resource, named after it as kubectl names resources ("pods.json",
// "daemonsets.apps.json"), each holding what `kubectl get RESOURCE -A -o
// json` printed, plus two files about the server:
//
//	api-resources.txt  kubectl api-resources -o name: what the server serves
//	version.json       kubectl version -o json: the server's version
//
// kubectl prints an empty result as a List with no items and no item type,
// so plain files can never say "there are none". A file named after its
// resource can: the loader treats its List as every object of that
// resource in the cluster, and a resource missing from api-resources.txt as
// not served. Everything else in the input stays open-world.

// Recipe file names.
const (
	RecipeAPIResources = "api-resources.txt"
	RecipeVersion      = "version.json"
)

// RecipeName is the file a recipe dump holds r in, without extension:
// kubectl's RESOURCE.GROUP notation ("daemonsets.apps", "pods").
func RecipeName(r Resource) string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// recipeResource finds the resource a file of a recipe dump holds, from
// its base name ("daemonsets.apps.json", "pods.yaml.gz").
func recipeResource(path string) (Resource, bool) {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	for _, ext := range []string{".json", ".yaml", ".yml"} {
		if name, ok := strings.CutSuffix(base, ext); ok {
			for _, r := range Known() {
				if RecipeName(r) == name {
					return r, true
				}
			}
			return Resource{}, false
		}
	}
	return Resource{}, false
}

// inRecipeDump reports whether a file lies in a recipe dump: a directory
// that also holds api-resources.txt, which the recipe always writes. A
// nodes.yaml elsewhere is just a file.
func inRecipeDump(path string) bool {
	st, err := os.Stat(filepath.Join(filepath.Dir(path), RecipeAPIResources))
	return err == nil && st.Mode().IsRegular()
}

// isRecipeMeta reports whether a file is one of the recipe's two files
// about the server, which are not Kubernetes objects.
func isRecipeMeta(path string) bool {
	base := filepath.Base(path)
	return base == RecipeAPIResources || base == RecipeVersion
}

// readAPIResources reads `kubectl api-resources -o name`: one resource a
// line, RESOURCE or RESOURCE.GROUP.
func readAPIResources(r io.Reader) (map[string]bool, error) {
	served := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.ContainsAny(line, " \t{}:") {
			return nil, fmt.Errorf("line %q is not a resource name (want the output of kubectl api-resources -o name)", firstLine(line))
		}
		served[line] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(served) == 0 {
		return nil, errors.New("file lists no resources (want the output of kubectl api-resources -o name)")
	}
	return served, nil
}

// readVersion reads the server's gitVersion from `kubectl version -o json`.
func readVersion(r io.Reader) (string, error) {
	var v struct {
		ServerVersion *struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&v); err != nil {
		return "", fmt.Errorf("reading kubectl version output: %w", err)
	}
	if v.ServerVersion == nil || v.ServerVersion.GitVersion == "" {
		return "", errors.New("no serverVersion.gitVersion (want the output of kubectl version -o json)")
	}
	return v.ServerVersion.GitVersion, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "..."
	}
	return s
}
