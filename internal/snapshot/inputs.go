package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Stdin is the --from path that reads standard input.
const Stdin = "-"

// LoadOptions tune LoadPathsWith.
type LoadOptions struct {
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Warn receives what the loader accepted but the user should know
	// (a key given twice); nil drops them.
	Warn func(Warning)
	// Strict makes every .yaml, .yml and .json file found in a directory
	// count as input, so that a Kustomize, Helm or other non-Kubernetes
	// file is an error (exit 2) rather than a skipped file with a note.
	Strict bool
}

// LoadPathsWith is LoadPaths with standard input ("-") and, unless Strict,
// directories that hold files which are not Kubernetes objects: those are
// skipped, and the notes say which and why.
func LoadPathsWith(paths []string, opts LoadOptions) (s *Snapshot, notes []string, err error) {
	var files []inputFile
	for _, p := range paths {
		if p == Stdin {
			files = append(files, inputFile{path: p})
			continue
		}
		found, err := expand([]string{p})
		if err != nil {
			return nil, nil, err
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() && !opts.Strict {
			kept := found[:0]
			for _, f := range found {
				if why := skipReason(f.path); why != "" {
					notes = append(notes, f.path+": skipped, "+why)
					continue
				}
				kept = append(kept, f)
			}
			if len(kept) == 0 {
				return nil, nil, &InputError{File: p, Err: errors.New("directory holds no Kubernetes objects (see --strict)")}
			}
			found = kept
		}
		files = append(files, found...)
	}
	var lopts []LoadOption
	if opts.Warn != nil {
		lopts = append(lopts, WithWarnings(opts.Warn))
	}
	l := newLoader(Source{Type: SourceFiles, Paths: paths}, lopts)
	if err := l.loadFiles(files, opts.Stdin); err != nil {
		return nil, nil, err
	}
	return l.finish(), notes, nil
}

// skipReason says why a file found in a directory is not Kubernetes input,
// or "" when it is (or may be: JSON and gzip are left to the loader).
// Kustomize and Helm files are templates of objects, not objects: kubegap
// reads what `kubectl kustomize` or `helm template` renders.
func skipReason(path string) string {
	base := filepath.Base(path)
	if base == RecipeMetrics {
		return "" // kubectl get --raw /metrics, judged by its content
	}
	if isRecipeMeta(path) && inRecipeDump(path) {
		return "" // a recipe dump's api-resources.txt or version.json
	}
	if base == RecipeAPIResources {
		return "not in a kubegap recipe dump (" + RecipeAPIResources + " is read only beside the files the recipe wrote)"
	}
	switch base {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return "a Kustomize file (audit the output of 'kubectl kustomize' instead)"
	case "Chart.yaml":
		return "a Helm chart (audit the output of 'helm template' instead)"
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
			return "part of the Helm chart in " + dir
		}
		if parent := filepath.Dir(dir); parent == dir || dir == "." {
			break
		}
	}
	if why := jsonSkipReason(path); why != "" {
		return why
	}
	if !yamlLooksLikeObjects(path) {
		return "not a Kubernetes object (no top-level apiVersion and kind)"
	}
	return ""
}

// yamlLooksLikeObjects scans the top-level keys of a plain YAML file's
// first document for apiVersion and kind. It reads lines, not YAML, so a
// large List costs one pass and no memory; JSON and gzip answer true.
func yamlLooksLikeObjects(path string) bool {
	f, err := openInput(path)
	if err != nil {
		return true // the loader reports it
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var apiVersion, kind, started bool
	for sc.Scan() {
		line := sc.Bytes()
		if !started {
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) == 0 || trimmed[0] == '#' || bytes.Equal(trimmed, []byte("---")) {
				continue
			}
			if trimmed[0] == '{' || trimmed[0] == '[' || trimmed[0] == 0x1f {
				return true
			}
			started = true
		}
		if bytes.HasPrefix(line, []byte("---")) {
			break
		}
		s := string(line)
		apiVersion = apiVersion || strings.HasPrefix(s, "apiVersion:")
		kind = kind || strings.HasPrefix(s, "kind:")
		if apiVersion && kind {
			return true
		}
	}
	return sc.Err() != nil || !started
}
