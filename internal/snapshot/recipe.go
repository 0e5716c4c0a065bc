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
// json` printed, plus files about the server:
//
//	api-resources.txt  kubectl api-resources -o name: what the server serves
//	version.json       kubectl version -o json: the server's version
//	metrics.txt        kubectl get --raw /metrics: what clients requested,
//	                   deprecated versions included (when a check reads it)
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
				if RecipeName(r) == name && r.NonResourceURL == "" {
					return r, true
				}
			}
			return Resource{}, false
		}
	}
	return Resource{}, false
}

// inRecipeDump reports whether a file lies in a recipe dump: a directory
// that holds api-resources.txt, which the recipe always writes, and whose
// other input files are all files the recipe writes (RESOURCE.GROUP.json,
// its per-object and count files, version.json), at least one of them a
// resource's. A nodes.yaml elsewhere is just a file, and an
// api-resources.txt beside a file the recipe does not write (a stray one
// next to a kubectl get dump) proves nothing about what that file lacks.
func inRecipeDump(path string) bool {
	dir := filepath.Dir(path)
	if !regular(filepath.Join(dir, RecipeAPIResources)) {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	resources := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == RecipeAPIResources || name == RecipeVersion || !isInputFile(name) {
			continue
		}
		if !isRecipeFile(name) {
			return false
		}
		resources++
	}
	return resources > 0
}

// isRecipeFile reports whether a file name is one the recipe writes for a
// resource.
func isRecipeFile(name string) bool {
	if _, ok := recipeCounted(name); ok {
		return true
	}
	if _, _, ok := recipeNamed(name); ok {
		return true
	}
	_, ok := recipeResource(name)
	return ok
}

// errStrayAPIResources: an api-resources.txt outside a recipe dump.
var errStrayAPIResources = errors.New(RecipeAPIResources + " is read only in a kubegap recipe dump, beside the files the recipe wrote " +
	"(see kubegap recipe): elsewhere what it lists proves nothing about the other files")

// recipeNamed finds the Named resource and the namespace/name a file of a
// recipe dump holds: "configmaps.kube-system.kube-proxy.json". Namespaces
// hold no dots, so the first dot after the resource ends the namespace.
func recipeNamed(path string) (Resource, string, bool) {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	base, ok := strings.CutSuffix(base, ".json")
	if !ok {
		return Resource{}, "", false
	}
	for _, r := range Known() {
		rest, ok := strings.CutPrefix(base, RecipeName(r)+".")
		if !r.Named || !ok {
			continue
		}
		ns, name, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		nn := ns + "/" + name
		for _, want := range NamesOf(r) {
			if strings.EqualFold(want, nn) {
				return r, want, true
			}
		}
	}
	return Resource{}, "", false
}

// RecipeCountSuffix ends the file a recipe dump counts a CountOnly
// resource in: "authrequests.dex.coreos.com.count.json" holds what
// `kubectl get --raw '/apis/dex.coreos.com/v1/authrequests?limit=1'`
// printed, one object and the server's remainingItemCount.
const RecipeCountSuffix = ".count.json"

// recipeCounted finds the CountOnly resource a count file of a recipe dump
// holds.
func recipeCounted(path string) (Resource, bool) {
	name, ok := strings.CutSuffix(strings.ToLower(filepath.Base(path)), RecipeCountSuffix)
	if !ok {
		return Resource{}, false
	}
	for _, r := range Known() {
		if r.CountOnly && RecipeName(r) == name {
			return r, true
		}
	}
	return Resource{}, false
}

// readCountList reads a LIST page asked for with limit=1: the count is the
// items on it plus the server's remainingItemCount. complete is false when
// there are more pages and the server did not say how many objects remain
// (it leaves the field out for some requests): the count is then a lower
// bound.
func readCountList(r io.Reader) (n int, complete bool, err error) {
	var l struct {
		Kind     string            `json:"kind"`
		Items    []json.RawMessage `json:"items"`
		Metadata struct {
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&l); err != nil {
		return 0, false, fmt.Errorf("reading a counted list: %w", err)
	}
	if !strings.HasSuffix(l.Kind, "List") {
		return 0, false, fmt.Errorf("kind %q is not a List (want the output of kubectl get --raw 'PATH?limit=1')", l.Kind)
	}
	n = len(l.Items)
	rem := l.Metadata.RemainingItemCount
	switch {
	case l.Metadata.Continue == "":
		return n, true, nil
	case rem == nil:
		return n, false, nil
	case *rem < 0:
		return 0, false, fmt.Errorf("remainingItemCount %d is negative", *rem)
	}
	return n + int(*rem), true, nil
}

// CountPath is the API path a CountOnly resource is counted at, across
// namespaces.
func CountPath(r Resource) string {
	if r.Group == "" {
		return "/api/" + r.Version + "/" + r.Resource
	}
	return "/apis/" + r.Group + "/" + r.Version + "/" + r.Resource
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

// RecipeScript is a POSIX shell script that dumps rs with kubectl alone, in
// the layout the loader trusts as complete. $KUBECTL picks the kubectl
// command and its flags ("kubectl --context prod"), $DIR the directory.
// A resource kubectl cannot list (forbidden, not served) leaves no file,
// so the audit reports it unknown (or not served, from api-resources.txt)
// rather than empty.
func RecipeScript(rs []Resource) string {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
# Dump what kubegap's checks read, with kubectl alone, so that
# 'kubegap audit --from "$DIR"' treats each resource as complete: one file
# per resource, plus what the server serves, its version and (when a check
# reads it) its /metrics.
# KUBECTL="kubectl --context prod" DIR=prod-dump sh recipe.sh
set -u
KUBECTL=${KUBECTL:-kubectl}
DIR=${DIR:-kubegap-dump}
mkdir -p "$DIR" || exit 2
status=0
dump() { # dump FILE ARGS...: kubectl's output to FILE, or no FILE at all
  file=$1; shift
  if $KUBECTL "$@" >"$DIR/$file.tmp"; then
    mv "$DIR/$file.tmp" "$DIR/$file"
  else
    rm -f "$DIR/$file.tmp"
    echo "kubegap recipe: could not dump $file; the audit will report it unknown" >&2
    status=1
  fi
}
`)
	fmt.Fprintf(&b, "dump %s version -o json\n", RecipeVersion)
	fmt.Fprintf(&b, "dump %s api-resources -o name\n", RecipeAPIResources)
	for _, r := range rs {
		if r.NonResourceURL != "" {
			// The API server's own metrics: what clients requested of it,
			// deprecated versions included. Forbidden leaves no file.
			fmt.Fprintf(&b, "dump %s get --raw %s\n", RecipeMetrics, r.NonResourceURL)
			continue
		}
		if r.Named {
			// One GET per object, as deploy/rbac.yaml grants them; an
			// object that does not exist leaves an empty file.
			for _, nn := range NamesOf(r) {
				ns, name, _ := strings.Cut(nn, "/")
				fmt.Fprintf(&b, "dump %s.%s.%s.json get %s -n %s %s --ignore-not-found -o json\n",
					RecipeName(r), ns, name, RecipeName(r), ns, name)
			}
			continue
		}
		if r.CountOnly {
			// One object and the server's count of the rest.
			line := fmt.Sprintf("dump %s%s get --raw '%s?limit=1'\n", RecipeName(r), RecipeCountSuffix, CountPath(r))
			if r.Custom {
				line = fmt.Sprintf("grep -qx '%s' \"$DIR/%s\" 2>/dev/null && %s", RecipeName(r), RecipeAPIResources, line)
			}
			b.WriteString(line)
			continue
		}
		args := "get " + RecipeName(r)
		if r.Namespaced {
			args += " -A"
		}
		if r.FieldSelector != "" {
			args += " --field-selector " + r.FieldSelector
		}
		if r.Custom {
			// A custom resource the server does not serve is no error:
			// api-resources.txt already says so.
			fmt.Fprintf(&b, "grep -qx '%s' \"$DIR/%s\" 2>/dev/null && dump %s.json %s -o json\n",
				RecipeName(r), RecipeAPIResources, RecipeName(r), args)
			continue
		}
		fmt.Fprintf(&b, "dump %s.json %s -o json\n", RecipeName(r), args)
	}
	b.WriteString(`echo "dumped into $DIR; audit it with: kubegap audit --from $DIR" >&2
exit $status
`)
	return b.String()
}
