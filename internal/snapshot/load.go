package snapshot

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/apimetrics"
)

// SnapshotAPIVersion and SnapshotKind mark a kubegap snapshot file.
const (
	SnapshotAPIVersion = "kubegap.dev/v1alpha1"
	SnapshotKind       = "Snapshot"
)

// SnapshotFormatVersion is the snapshot format this kubegap writes, in the
// file's formatVersion. A file without one was written by an older kubegap
// (the same format) and is read as such; one with a higher version was
// written by a newer kubegap and is refused rather than half understood.
const SnapshotFormatVersion = 1

// checkFormatVersion refuses a snapshot format this kubegap cannot read.
func checkFormatVersion(v int) error {
	if v < 0 || v > SnapshotFormatVersion {
		return fmt.Errorf("snapshot format version %d is not one this kubegap reads (%d or older): read it with the kubegap that wrote it, or a newer one",
			v, SnapshotFormatVersion)
	}
	return nil
}

// InputError is bad offline input: it names the file, and the document and
// item where known. The CLI prints it as one line and exits 2.
type InputError struct {
	File     string
	Document int // 1-based; 0 when the whole file is at fault
	Item     int // 1-based index in a List; 0 when not in a List
	Err      error
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Document > 0 {
		fmt.Fprintf(&b, ": document %d", e.Document)
	}
	if e.Item > 0 {
		fmt.Fprintf(&b, ", item %d", e.Item)
	}
	b.WriteString(": ")
	// Parsers report some errors over several lines, and quote what the
	// file holds; ours is one line of bounded length.
	b.WriteString(boundMessage(e.Err.Error()))
	return b.String()
}

func (e *InputError) Unwrap() error { return e.Err }

// LoadPaths reads files and directories into one snapshot. Directories are
// walked for .yaml, .yml and .json files, gzipped or not; files there that
// hold no object (empty, or only comments) are skipped, as "kubectl apply
// -f DIR" skips them. The first bad document ends the load with an
// *InputError.
func LoadPaths(paths []string, opts ...LoadOption) (*Snapshot, error) {
	files, err := expand(paths)
	if err != nil {
		return nil, err
	}
	l := newLoader(Source{Type: SourceFiles, Paths: paths}, opts)
	if err := l.loadFiles(files, nil); err != nil {
		return nil, err
	}
	return l.finish(), nil
}

// loadFiles reads files in order; a file found in a directory that holds
// no object is skipped, but a directory none of whose files does is an
// error. The path "-" reads stdin.
func (l *loader) loadFiles(files []inputFile, stdin io.Reader) error {
	loaded := map[string]bool{} // directories with a file that held objects
	for _, f := range files {
		var err error
		mark := l.markObjects()
		if f.path == Stdin {
			if stdin == nil {
				return &InputError{File: "standard input", Err: errors.New("no standard input")}
			}
			err = l.load("standard input", stdin)
			l.spanObjects("standard input", mark)
		} else {
			err = l.loadFile(f.path)
			l.spanObjects(f.path, mark)
		}
		if f.dir != "" && (errors.Is(err, errNoObjects) || errors.Is(err, errEmpty)) {
			continue
		}
		if err != nil {
			return err
		}
		loaded[f.dir] = true
	}
	for _, f := range files {
		if f.dir != "" && !loaded[f.dir] {
			return &InputError{File: f.dir, Err: errors.New("no file in the directory holds an object")}
		}
	}
	return nil
}

// errEmpty and errNoObjects: a file of no bytes, and one of only white
// space or comments.
var (
	errEmpty     = errors.New("file is empty")
	errNoObjects = errors.New("file holds no objects")
)

// LoadFS reads the named files of an fs.FS, as LoadPaths does; the demo
// cluster is loaded this way from the binary.
func LoadFS(fsys fs.FS, src Source, names []string, opts ...LoadOption) (*Snapshot, error) {
	l := newLoader(src, opts)
	for _, n := range names {
		f, err := fsys.Open(n)
		if err != nil {
			return nil, &InputError{File: n, Err: err}
		}
		err = l.load(n, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return l.finish(), nil
}

// inputFile is a file to read, and the directory given that holds it.
type inputFile struct {
	path string
	dir  string // "" for a file given by name
}

func expand(paths []string) ([]inputFile, error) {
	var files []inputFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, &InputError{File: p, Err: unwrapPathError(err)}
		}
		if !st.IsDir() {
			if err := notRegular(st); err != nil {
				return nil, &InputError{File: p, Err: err}
			}
			files = append(files, inputFile{path: p})
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return &InputError{File: path, Err: unwrapPathError(err)}
			}
			if !d.IsDir() && (isInputFile(d.Name()) || d.Name() == RecipeAPIResources || d.Name() == RecipeMetrics) {
				// A pipe, device or socket among the files is refused, not
				// skipped: the user meant it as input, and it cannot be.
				if _, err := statInput(path); err != nil {
					return err
				}
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, &InputError{File: p, Err: errors.New("directory holds no .yaml, .yml or .json files")}
		}
		sort.Strings(found)
		for _, f := range found {
			files = append(files, inputFile{path: f, dir: p})
		}
	}
	return files, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func isInputFile(name string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ".gz")
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

type loader struct {
	snap      *Snapshot
	listed    map[Resource]bool // typed lists read, even empty ones
	snapshots int               // kubegap snapshot files read
	// inSnapshot is set while a kubegap snapshot file's items are read:
	// they were trimmed when saved, so their size is not measured again
	// (see AnnotationSerializedBytes).
	inSnapshot bool
	files      int // plain files read
	lists      int // List documents read
	coverage   map[Resource]Coverage
	snapScope  Scope // the scope a snapshot file recorded
	// recipe holds the resources read whole from a recipe dump's files.
	recipe map[Resource]bool
	// named holds, per Named resource, the names a recipe dump settled:
	// its object, or an empty file for one that does not exist.
	named map[Resource]map[string]bool
	// served is what a recipe dump's api-resources.txt lists; nil without.
	served map[string]bool
	opts   loadOptions
	// streamAfter is streamYAMLAfter; tests lower it.
	streamAfter int
	// counted holds the CountOnly resources a recipe dump counted, and
	// whether the count is exact (see readCountList).
	counted map[Resource]bool
	// lastList is the kind of the List document read last, and
	// lastListPaged whether the server said more pages follow.
	lastList      typeMeta
	lastListPaged bool
	// itemType is the kind given to the items of the List being read that
	// name none (see withItemType).
	itemType typeMeta
	// clusterInfo is what kubectl cluster-info dumps in the input hold
	// whole; ciStream follows a standard-output dump being read.
	clusterInfo *clusterInfoSeen
	ciStream    *clusterInfoStream
	// file is the file being read, for warnings; spans are where each
	// file's objects lie, for reporting an object two files define.
	file  string
	spans []objectSpan
	// servedFile is the api-resources.txt served was read from.
	servedFile string
	// miscount says, per resource, how a snapshot's coverage count and
	// its items disagreed (see miscounted).
	miscount map[Resource]string
	// metricsRead: the input held a kube-apiserver /metrics output;
	// wantMetrics: the file being read is named as the recipe names one.
	metricsRead, wantMetrics bool
	// streamed counts the objects of each resource the items of a
	// streamed YAML document held so far: a snapshot's head comes after.
	streamed map[Resource]int
}

func newLoader(src Source, opts []LoadOption) *loader {
	return &loader{snap: New(src), coverage: map[Resource]Coverage{}, listed: map[Resource]bool{},
		recipe: map[Resource]bool{}, opts: makeLoadOptions(opts), streamAfter: streamYAMLAfter}
}

func (l *loader) loadFile(name string) error {
	f, err := openInput(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if isRecipeMeta(name) && inRecipeDump(name) {
		return l.loadRecipeMeta(name, f)
	}
	if filepath.Base(name) == RecipeAPIResources {
		return &InputError{File: name, Err: errStrayAPIResources}
	}
	if r, ok := recipeCounted(name); ok && inRecipeDump(name) {
		n, complete, err := readCountList(f)
		if err != nil {
			return &InputError{File: name, Err: err}
		}
		l.snap.AddCount(r, n)
		if l.counted == nil {
			l.counted = map[Resource]bool{}
		}
		l.counted[r] = complete
		return nil
	}
	if r, nn, ok := recipeNamed(name); ok && inRecipeDump(name) {
		if l.named == nil {
			l.named = map[Resource]map[string]bool{}
		}
		if l.named[r] == nil {
			l.named[r] = map[string]bool{}
		}
		l.named[r][nn] = true
		if st, err := f.Stat(); err == nil && st.Size() == 0 {
			return nil // kubectl --ignore-not-found: the object does not exist
		}
	}
	if filepath.Base(name) == RecipeMetrics {
		l.wantMetrics = true
		defer func() { l.wantMetrics = false }()
	}
	r, named := recipeResource(name)
	named = named && inRecipeDump(name)
	lists, files, snaps := l.lists, l.files, l.snapshots
	if tm, ok := clusterInfoItemType(name); ok {
		l.itemType = tm
		defer func() { l.itemType = typeMeta{} }()
	}
	if err := l.load(name, f); err != nil {
		return err
	}
	l.noteClusterInfoFile(name, lists, files, snaps)
	// A file named after its resource that holds exactly one List is what
	// `kubectl get RESOURCE -A -o json` wrote: every object there is.
	if named && l.lists == lists+1 && l.files == files+1 && l.snapshots == snaps {
		l.recipe[r] = true
	}
	return nil
}

// loadRecipeMeta reads a recipe dump's api-resources.txt or version.json.
func (l *loader) loadRecipeMeta(name string, f io.Reader) error {
	if filepath.Base(name) == RecipeVersion {
		v, err := readVersion(f)
		if err != nil {
			return &InputError{File: name, Err: err}
		}
		l.file = name
		l.setServerVersion(v)
		return nil
	}
	l.file = name
	served, err := readAPIResources(f)
	if err != nil {
		return &InputError{File: name, Err: err}
	}
	l.served, l.servedFile = served, name
	return nil
}

// load reads one file: gzip is detected by its magic bytes, UTF-16 and
// UTF-8 by their byte-order marks, JSON by its first non-space byte;
// anything else is read as (multi-document) YAML.
func (l *loader) load(name string, r io.Reader) error {
	l.file = name
	compressed := &countingReader{r: r}
	br := bufio.NewReaderSize(compressed, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return &InputError{File: name, Err: fmt.Errorf("reading gzip: %w", err)}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(&gzipBound{r: zr, in: compressed, limit: gzipLimit}, 64<<10)
	}
	br = decodeBOM(br)
	first, err := firstByte(br)
	if err == io.EOF {
		return &InputError{File: name, Err: errEmpty}
	}
	if err != nil {
		return &InputError{File: name, Err: readErr(err)}
	}
	if first == '#' || l.wantMetrics {
		// kube-apiserver's /metrics, saved with kubectl get --raw, is
		// known by its content: it starts with a # HELP or # TYPE line.
		if head, _ := br.Peek(4096); l.wantMetrics || apimetrics.Looks(head) {
			return l.loadMetrics(name, br)
		}
	}
	if first == '{' || first == '[' {
		return l.loadJSON(name, br)
	}
	return l.loadYAML(name, br)
}

// malformed is a JSON syntax or read error, as the user sees it; a limit
// is said as such, not as bad JSON.
func malformed(err error) error {
	if le, ok := asLimit(err); ok {
		return le
	}
	return fmt.Errorf("malformed JSON: %w", readErr(err))
}

func readErr(err error) error {
	if le, ok := asLimit(err); ok {
		return le
	}
	if isTruncated(err) {
		return fmt.Errorf("file is truncated or corrupt: %w", err)
	}
	return err
}

// isTruncated: the input ended inside a value, or a gzip stream is cut
// short or damaged.
func isTruncated(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader)
}

func firstByte(br *bufio.Reader) (byte, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return 0, err
		}
		c := b[i-1]
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, nil
		}
		if i > 4096 {
			// Leading white space this long: let the YAML reader judge it.
			return ' ', nil
		}
	}
}

func (l *loader) loadJSON(name string, r *bufio.Reader) error {
	if head, _ := r.Peek(len(snapshotHead)); string(head) == snapshotHead {
		err := l.streamSnapshot(r)
		if errors.Is(err, errSecondDocument) {
			return &InputError{File: name, Document: 2, Err: err}
		}
		if err != nil {
			return withPlace(err, name, 1)
		}
		return nil
	}
	if isClusterInfoStream(r) {
		return l.loadClusterInfoStream(name, r)
	}
	return l.loadJSONDocuments(name, r)
}

// loadJSONDocuments reads one JSON document after another: a List item by
// item, none of its items larger than documentLimit, and any other
// document within documentLimit.
func (l *loader) loadJSONDocuments(name string, r io.Reader) error {
	budget := &valueBudget{r: r, limit: documentLimit}
	dec := jsontext.NewDecoder(budget)
	for doc := 1; ; doc++ {
		budget.mark = dec.InputOffset()
		if dec.PeekKind() == '{' {
			// An object is read member by member, a List's items one by
			// one (see jsonlist.go).
			if err := l.loadJSONObject(name, doc, dec, budget); err != nil {
				return err
			}
			continue
		}
		raw, err := dec.ReadValue()
		if err == io.EOF {
			if doc == 1 {
				return &InputError{File: name, Err: errNoObjects}
			}
			return nil
		}
		if err != nil {
			return &InputError{File: name, Document: doc, Err: malformed(err)}
		}
		// raw is only valid until the next read; addDocument is done with
		// it before then.
		if err := l.addDocument(raw); err != nil {
			return withPlace(err, name, doc)
		}
	}
}

func (l *loader) loadYAML(name string, r *bufio.Reader) error {
	sc := &docScanner{br: r, streamAfter: l.streamAfter}
	var pending []yamlPiece
	doc := 1
	addPending := func() error {
		err := l.addYAMLItems(name, doc, pending)
		pending = pending[:0]
		return err
	}
	emit := func(p yamlPiece) error {
		pending = append(pending, p)
		if len(pending) < decodeChunk {
			return nil
		}
		return addPending()
	}
	seen := 0
	for ; ; doc++ {
		d, err := sc.next(emit)
		if err == io.EOF {
			if seen == 0 {
				return &InputError{File: name, Err: errNoObjects}
			}
			return nil
		}
		var ie *InputError
		if errors.As(err, &ie) {
			return err
		}
		if err != nil {
			return &InputError{File: name, Document: doc, Err: readErr(err)}
		}
		if d.wasStreamed {
			if err := addPending(); err != nil {
				return err
			}
			seen++
			if err := l.addStreamedHead(name, doc, &d); err != nil {
				return withPlace(err, name, doc)
			}
			continue
		}
		if isBlankYAML(d.text) {
			doc--
			continue
		}
		j, dups, err := yamlToJSON(d.text)
		if err != nil && bytes.Contains(d.text, []byte("\n"+logStart)) {
			return &InputError{File: name, Document: doc, Err: errClusterInfoYAMLStream}
		}
		if err != nil {
			return &InputError{File: name, Document: doc, Err: fmt.Errorf("malformed YAML: %w", err)}
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			doc--
			continue
		}
		for _, dup := range dups {
			l.opts.warn(Warning{File: name, Document: doc, Message: dup.message(d.fileLine)})
		}
		seen++
		if err := l.addDocument(j); err != nil {
			return withPlace(err, name, doc)
		}
	}
}

// isBlankYAML is true for a document of only comments and white space.
func isBlankYAML(chunk []byte) bool {
	for _, line := range bytes.Split(chunk, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return false
		}
	}
	return true
}

// docError is an error in one document, before its file and index are known.
type docError struct {
	item int
	err  error
}

func (e *docError) Error() string { return e.err.Error() }

func withPlace(err error, file string, doc int) error {
	var de *docError
	if errors.As(err, &de) {
		return &InputError{File: file, Document: doc, Item: de.item, Err: de.err}
	}
	return &InputError{File: file, Document: doc, Err: err}
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// addDocument adds one JSON document: an object, a List, or a snapshot.
func (l *loader) addDocument(raw []byte) error {
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] != '{' {
		return errors.New("document is not an object")
	}
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	switch {
	case tm.Kind == SnapshotKind && tm.APIVersion == SnapshotAPIVersion:
		return l.addSnapshot(raw)
	case tm.Kind == SnapshotKind && strings.HasPrefix(tm.APIVersion, "kubegap.dev/"):
		return fmt.Errorf("snapshot version %s is not supported (this kubegap reads %s)", tm.APIVersion, SnapshotAPIVersion)
	case strings.HasSuffix(tm.Kind, "List"):
		var list struct {
			Items    []jsontext.Value `json:"items"`
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("reading %s items: %w", tm.Kind, err)
		}
		l.addListHead(tm)
		l.lastListPaged = list.Metadata.Continue != ""
		if l.ciStream != nil {
			l.ciStream.list(tm, l.lastListPaged, appendNamespaces(nil, list.Items))
		}
		if it := listItemType(tm); it.Kind != "" {
			prev := l.itemType
			l.itemType = it
			defer func() { l.itemType = prev }()
		}
		return l.addItems(list.Items)
	case tm.Kind == "" && tm.APIVersion == "":
		if ok, err := l.addVersion(raw); ok || err != nil {
			return err
		}
	}
	if l.ciStream != nil {
		l.ciStream.other()
	}
	l.files++
	return l.addObject(raw)
}

// addListHead records a List document, before or after its items.
func (l *loader) addListHead(tm typeMeta) {
	l.files++
	l.lists++
	l.lastList, l.lastListPaged = tm, false
	// "kubectl get deployments -A -o json" of an empty cluster is a
	// DeploymentList with no items: Deployments were read, none exist.
	if r, _, ok, _ := resolveTyped(tm.APIVersion, strings.TrimSuffix(tm.Kind, "List")); ok {
		l.listed[r] = true
	}
}

func (l *loader) addObject(raw []byte) error {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	if tm.Kind == "" {
		return errors.New("object has no kind")
	}
	if tm.APIVersion == "" {
		return fmt.Errorf("%s has no apiVersion", tm.Kind)
	}
	group := groupOf(tm.APIVersion)
	r, legacy, typed, err := resolveTyped(tm.APIVersion, tm.Kind)
	if err != nil {
		return err
	}
	if typed {
		k, _ := kindFor(r)
		obj, err := k.decodeJSON(raw)
		if err != nil {
			return err
		}
		if err := legacy.apply(obj, raw); err != nil {
			return err
		}
		if legacy != nil {
			l.snap.noteConverted(r.Kind, obj)
		}
		k.addDecoded(l.snap, obj)
		return nil
	}
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("decoding %s: %w", tm.Kind, err)
	}
	if u.GetName() == "" && u.GetGenerateName() == "" {
		return fmt.Errorf("%s has no metadata.name", tm.Kind)
	}
	if r, ok := ByGroupKind(group, tm.Kind); ok && r.CountOnly {
		l.snap.AddCount(r, 1) // counted, never kept
		return nil
	}
	noteWrittenAs(&u, u.GetAPIVersion())
	if !l.inSnapshot {
		noteSerializedBytes(&u, compactJSONLen(raw))
	}
	trimMeta(&u)
	trimCustom(&u)
	key := u.GetAPIVersion() + "/" + u.GetKind()
	if r, ok := ByGroupKind(group, tm.Kind); ok {
		if r.Custom {
			key = r.APIVersion() + "/" + r.Kind
		}
		if r.Namespaced && u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
	}
	l.snap.Custom[key] = append(l.snap.Custom[key], u)
	return nil
}

// groupOf returns the API group of an apiVersion ("" for the core group).
func groupOf(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// snapshotFile is the on-disk form of a kubegap snapshot (see Save).
type snapshotFile struct {
	APIVersion    string     `json:"apiVersion"`
	Kind          string     `json:"kind"`
	FormatVersion int        `json:"formatVersion,omitempty"`
	Source        Source     `json:"source"`
	Coverage      []Coverage `json:"coverage"`
	// DeprecatedAPIRequests are the /metrics series the snapshot kept.
	DeprecatedAPIRequests []DeprecatedAPIRequest `json:"deprecatedAPIRequests,omitempty"`
	// StorageSizes are the storage size series the snapshot kept.
	StorageSizes []StorageSize `json:"storageSizes,omitempty"`
	// WriteLatency are the write latency series the snapshot kept.
	WriteLatency []WriteLatency   `json:"writeLatency,omitempty"`
	Items        []jsontext.Value `json:"items"`
}

func (l *loader) addSnapshot(raw []byte) error {
	var sf snapshotFile
	if err := json.Unmarshal(raw, &sf); err != nil {
		return fmt.Errorf("reading snapshot: %w", err)
	}
	if err := checkFormatVersion(sf.FormatVersion); err != nil {
		return err
	}
	l.snapshots++
	l.inSnapshot = true
	held, err := l.heldBy(func() error { return l.addItems(sf.Items) })
	l.inSnapshot = false
	if err != nil {
		return err
	}
	return l.snapshotHead(sf, held)
}

// snapshotHead takes a snapshot's source and coverage; held counts the
// objects of each resource its items held.
func (l *loader) snapshotHead(sf snapshotFile, held map[Resource]int) error {
	if err := checkFormatVersion(sf.FormatVersion); err != nil {
		return err
	}
	if l.snapshots == 1 {
		l.snap.Source.ServerVersion = sf.Source.ServerVersion
		l.snap.Source.Context = sf.Source.Context
		l.snapScope = sf.Source.Scope
	}
	for _, c := range sf.Coverage {
		r, ok := Parse(c.Resource)
		if !ok {
			continue // written by a newer kubegap; its objects are still kept
		}
		if r.CountOnly && c.Status == StatusRead {
			// A counted resource has no items: its count is all there is.
			l.snap.AddCount(r, c.Count)
		}
		if r == APIServerMetrics {
			// Its series are in the head, not among the items.
			held[r] = len(sf.DeprecatedAPIRequests) + len(sf.StorageSizes) + len(sf.WriteLatency)
			l.snap.AddDeprecatedAPIRequests(sf.DeprecatedAPIRequests...)
			l.snap.AddStorageSizes(sf.StorageSizes...)
			l.snap.AddWriteLatency(sf.WriteLatency...)
		}
		if !r.CountOnly && c.Status == StatusRead && held[r] != c.Count {
			l.miscounted(r, c.Count, held[r])
		}
		c.Count = 0
		l.coverage[r] = c
	}
	return nil
}

// miscounted records a snapshot whose coverage counts another number of
// objects of r than its items hold: cut, or added to, after it was
// written. Its read of r is then not known to be whole, so r is read as
// objects in the input, not as complete (an audit of it can be partial,
// never a pass its missing objects would have failed), and the user is
// told.
func (l *loader) miscounted(r Resource, recorded, held int) {
	msg := fmt.Sprintf("the snapshot's coverage counts %d %s objects but its items hold %d: read as incomplete", recorded, r, held)
	if l.miscount == nil {
		l.miscount = map[Resource]string{}
	}
	l.miscount[r] = msg
	l.opts.warn(Warning{File: l.file, Message: msg})
}

// heldBy returns how many objects of each resource add added.
func (l *loader) heldBy(add func() error) (map[Resource]int, error) {
	before := l.itemCounts()
	err := add()
	held := l.itemCounts()
	for r, n := range before {
		held[r] -= n
	}
	return held, err
}

// itemCounts counts the objects of each resource added so far, before
// Finish drops duplicates: what the items of the files read held.
func (l *loader) itemCounts() map[Resource]int {
	out := map[Resource]int{}
	for _, r := range Known() {
		if !r.CountOnly {
			out[r] = l.snap.Count(r)
		}
	}
	return out
}

// snapshotHead starts every snapshot file Write writes.
const snapshotHead = `{"apiVersion":"` + SnapshotAPIVersion + `","kind":"` + SnapshotKind + `",`

// streamSnapshot reads a snapshot file item by item, so that neither the
// whole document nor all its items are held as raw JSON at once: at 100k
// pods that would be hundreds of MB read three times over. Files that do
// not start as Write writes them go through addDocument instead.
//
// Reading is pipelined: one goroutine cuts the items array into chunks of
// raw items while the previous chunk is decoded (by all CPUs) and added.
// Cutting uses jsontext, which finds the end of a value at several times
// the speed of encoding/json's Decoder.
func (l *loader) streamSnapshot(r io.Reader) error {
	budget := &valueBudget{r: r, limit: documentLimit}
	dec := jsontext.NewDecoder(budget)
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '{' {
		return malformed(orMissing(err, "object"))
	}
	l.snapshots++
	var head snapshotFile
	held := map[Resource]int{}
	for dec.PeekKind() == '"' {
		t, err := dec.ReadToken()
		if err != nil {
			return malformed(err)
		}
		if key := t.String(); key != "items" {
			budget.mark = dec.InputOffset()
			v, err := dec.ReadValue()
			if err != nil {
				return malformed(err)
			}
			switch key {
			case "formatVersion":
				// Write puts it before the items: a newer format is refused
				// before its items are read as this one.
				if err = json.Unmarshal(v, &head.FormatVersion); err == nil {
					err = checkFormatVersion(head.FormatVersion)
				}
			case "source":
				err = json.Unmarshal(v, &head.Source)
			case "deprecatedAPIRequests":
				err = json.Unmarshal(v, &head.DeprecatedAPIRequests)
			case "storageSizes":
				err = json.Unmarshal(v, &head.StorageSizes)
			case "writeLatency":
				err = json.Unmarshal(v, &head.WriteLatency)
			case "coverage":
				err = json.Unmarshal(v, &head.Coverage)
				// Write puts the coverage, with counts, before the items:
				// each list is sized once instead of grown 1.25x at a time
				// (at 100k pods, gigabytes of copying and garbage).
				for _, c := range head.Coverage {
					if r, ok := Parse(c.Resource); ok {
						l.snap.Reserve(r, c.Count)
					}
				}
			}
			if err != nil {
				return fmt.Errorf("reading snapshot: %w", err)
			}
			continue
		}
		l.inSnapshot = true
		got, err := l.heldBy(func() error { return l.streamItems(dec, budget) })
		l.inSnapshot = false
		if err != nil {
			return err
		}
		for r, n := range got {
			held[r] += n
		}
	}
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '}' {
		return malformed(orMissing(err, "end of object"))
	}
	// A gzip file cut short can hold the whole JSON and lack only its
	// trailer: that is a truncated file, not a second document.
	if _, err := dec.ReadToken(); isTruncated(err) {
		return readErr(err)
	} else if err != io.EOF {
		return errSecondDocument
	}
	return l.snapshotHead(head, held)
}

var errSecondDocument = errors.New("a snapshot file holds one document")

// streamItems reads the items array of a snapshot, a chunk ahead of the
// chunk being decoded and added; budget bounds each item.
func (l *loader) streamItems(dec *jsontext.Decoder, budget *valueBudget) error {
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '[' {
		return malformed(orMissing(err, "items array"))
	}
	chunks := make(chan []jsontext.Value, 1)
	stop := make(chan struct{})
	var cutErr error // set before chunks is closed
	go func() {
		defer close(chunks)
		for {
			chunk := make([]jsontext.Value, 0, decodeChunk)
			for len(chunk) < decodeChunk && dec.PeekKind() != ']' {
				budget.mark = dec.InputOffset()
				v, err := dec.ReadValue()
				if err != nil {
					cutErr = malformed(err)
					break
				}
				chunk = append(chunk, bytes.Clone(v)) // v is only valid until the next read
			}
			if cutErr == nil && len(chunk) < decodeChunk {
				if t, err := dec.ReadToken(); err != nil || t.Kind() != ']' {
					cutErr = malformed(orMissing(err, "end of items"))
				}
			}
			select {
			case chunks <- chunk:
			case <-stop:
				return
			}
			if cutErr != nil || len(chunk) < decodeChunk {
				return
			}
		}
	}()
	item := 0
	for chunk := range chunks {
		if err := l.addItemsAt(chunk, item); err != nil {
			close(stop)
			for range chunks { // let the reader finish before dec is used again
			}
			return err
		}
		item += len(chunk)
	}
	return cutErr
}

func orMissing(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.New("no " + what)
}

// decodeChunk bounds the objects decoded ahead of being trimmed and added.
const decodeChunk = 2048

// addItems adds the items of a List or snapshot, in order. Objects of typed
// kinds are decoded by all CPUs at once (JSON decoding is most of an
// offline audit's time); everything else, and every error, goes through
// addObject one by one, so the result and the error reported are what a
// sequential load gives.
func (l *loader) addItems(items []jsontext.Value) error { return l.addItemsAt(items, 0) }

// addItemsAt is addItems for items that follow offset others, for error
// positions.
func (l *loader) addItemsAt(items []jsontext.Value, offset int) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	def := l.itemType
	decoded := make([]any, min(decodeChunk, len(items)))
	kinds := make([]*kind, len(decoded))
	converted := make([]string, len(decoded)) // the kind, when the loader converted the object
	for start := 0; start < len(items); start += decodeChunk {
		chunk := items[start:min(start+decodeChunk, len(items))]
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, len(chunk)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= len(chunk) {
						return
					}
					chunk[i] = withItemType(chunk[i], def)
					kinds[i], decoded[i], converted[i] = decodeTyped(chunk[i])
				}
			}()
		}
		wg.Wait()
		for i, raw := range chunk {
			if kinds[i] != nil {
				if converted[i] != "" {
					l.snap.noteConverted(converted[i], decoded[i])
				}
				kinds[i].addDecoded(l.snap, decoded[i])
			} else if err := l.addObject(raw); err != nil {
				return &docError{item: offset + start + i + 1, err: err}
			}
			kinds[i], decoded[i], converted[i], items[start+i] = nil, nil, "", nil // let the raw bytes go
		}
	}
	return nil
}

// decodeTyped decodes an object of a typed kind, and the kind again when
// it converted the object from an older version. It returns a nil kind for
// anything else, errors included, which addObject then handles.
func decodeTyped(raw []byte) (*kind, any, string) {
	tm, ok := leadingTypeMeta(raw)
	if !ok {
		if err := json.Unmarshal(raw, &tm); err != nil {
			return nil, nil, ""
		}
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		return nil, nil, ""
	}
	r, legacy, typed, err := resolveTyped(tm.APIVersion, tm.Kind)
	if err != nil || !typed {
		return nil, nil, ""
	}
	k, _ := kindFor(r)
	obj, err := k.decodeJSON(raw)
	if err != nil || legacy.apply(obj, raw) != nil {
		return nil, nil, ""
	}
	converted := ""
	if legacy != nil {
		converted = r.Kind
	}
	return &k, obj, converted
}

// finish records coverage. A snapshot's own coverage is kept (a resource it
// could not read stays forbidden or not-served) and what it read is
// complete, in the scope it recorded. A recipe dump's files are complete,
// and what its api-resources.txt lacks is not served. Plain files read the
// resources they hold, never completely, and nothing of what they lack:
// an object missing from them is unknown, not absent.
func (l *loader) finish() *Snapshot {
	s := l.snap
	l.warnDuplicates()
	s.Finish()
	s.Source.ClusterInfo = l.clusterInfo.source()
	if l.snapshots > 0 && l.files == 0 {
		s.Source.Type = SourceSnapshot
		s.Source.Scope = l.snapScope
	}
	for _, r := range Known() {
		c, fromSnapshot := l.coverage[r]
		switch {
		case r == APIServerMetrics && l.metricsRead:
			// A /metrics output holds every series the server had.
			s.SetCoverage(r, StatusRead, "")
			s.SetComplete(r, nil)
		case r == APIServerMetrics && !fromSnapshot:
			s.SetCoverage(r, StatusNotInInput, "the input holds no kube-apiserver /metrics output (kubectl get --raw /metrics > "+RecipeMetrics+")")
		case fromSnapshot && l.miscount[r] != "":
			s.SetCoverage(r, StatusRead, l.miscount[r])
		case fromSnapshot && (c.Status != StatusRead || s.Count(r) > 0 || l.files == 0):
			s.SetCoverage(r, c.Status, c.Message)
			if c.Status == StatusRead || c.Status == StatusNotServed {
				s.SetComplete(r, l.snapScope.Namespaces)
			}
		case r.CountOnly && l.counted != nil && l.counted[r]:
			s.SetCoverage(r, StatusRead, "")
			s.SetComplete(r, nil)
		case r.CountOnly && l.counted != nil && !l.counted[r] && s.Count(r) > 0:
			s.SetCoverage(r, StatusRead, "the server gave no remainingItemCount: the count is a lower bound")
		case l.recipe[r] || r.Named && len(l.named[r]) == len(NamesOf(r)):
			s.SetCoverage(r, StatusRead, "")
			s.SetComplete(r, nil)
		case r == Nodes && l.clusterInfo != nil && l.clusterInfo.nodes:
			s.SetCoverage(r, StatusRead, "")
			s.SetComplete(r, nil)
		case len(l.clusterInfo.namespaces(r)) > 0:
			s.SetCoverage(r, StatusRead, "")
			s.SetComplete(r, l.clusterInfo.namespaces(r))
		case l.served != nil && !l.served[RecipeName(r)] && s.Count(r) == 0 && !AlwaysServed(r):
			s.SetCoverage(r, StatusNotServed, "not listed by kubectl api-resources")
			s.SetComplete(r, nil)
		case s.Count(r) > 0 || l.listed[r]:
			s.SetCoverage(r, StatusRead, "")
		default:
			s.SetCoverage(r, StatusNotInInput, "the input holds no "+r.Kind+" objects")
		}
	}
	l.warnUnlistedBuiltIns()
	return s
}

// leadingTypeMeta reads kind and apiVersion when an object starts with them
// as encoding/json writes a typed object: {"kind":"K","apiVersion":"V",.
// It spares a full scan of every item of a snapshot just to learn its
// kind; anything else (other order, escapes, white space) gives ok=false.
func leadingTypeMeta(raw []byte) (tm typeMeta, ok bool) {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"kind":"`))
	if !ok {
		return tm, false
	}
	i := bytes.IndexAny(rest, `"\`)
	if i < 0 || rest[i] != '"' {
		return tm, false
	}
	tm.Kind, rest = string(rest[:i]), rest[i+1:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"apiVersion":"`)); !ok {
		return typeMeta{}, false
	}
	i = bytes.IndexAny(rest, `"\`)
	if i < 0 || rest[i] != '"' {
		return typeMeta{}, false
	}
	tm.APIVersion = string(rest[:i])
	return tm, true
}
