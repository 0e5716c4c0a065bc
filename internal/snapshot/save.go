package snapshot

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Write writes the snapshot as a kubegap snapshot document:
//
//	{"apiVersion": "kubegap.dev/v1alpha1", "kind": "Snapshot", "formatVersion": 1,
//	 "source": {...}, "coverage": [...], "items": [objects...]}
//
// The coverage counts the items of each resource read; a reader checks
// them (see loader.miscounted), and refuses a formatVersion newer than its
// own (SnapshotFormatVersion).
//
// Objects are written trimmed, as checks see them: no managedFields, no
// environment variable values, and never a Secret (kubegap reads none).
// Items are streamed one by one, so memory does not double while writing.
func (s *Snapshot) Write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	head := struct {
		APIVersion    string     `json:"apiVersion"`
		Kind          string     `json:"kind"`
		FormatVersion int        `json:"formatVersion"`
		Source        Source     `json:"source"`
		Coverage      []Coverage `json:"coverage"`
		// The /metrics series, which are no objects: before the items.
		DeprecatedAPIRequests []DeprecatedAPIRequest `json:"deprecatedAPIRequests,omitempty"`
		StorageSizes          []StorageSize          `json:"storageSizes,omitempty"`
		WriteLatency          []WriteLatency         `json:"writeLatency,omitempty"`
	}{SnapshotAPIVersion, SnapshotKind, SnapshotFormatVersion, s.Source, s.Coverage(), s.DeprecatedAPIRequests, s.StorageSizes, s.WriteLatency}
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	// Open the object, leave it unterminated, and append "items".
	bw.Write(b[:len(b)-1])
	bw.WriteString(`,"items":[`)
	first := true
	enc := json.NewEncoder(bw)
	emit := func(obj any) error {
		if !first {
			bw.WriteString(",")
		}
		first = false
		return enc.Encode(obj)
	}
	for _, k := range kinds {
		if err := k.each(s, func(o runtime.Object) error { return emit(o) }); err != nil {
			return err
		}
	}
	for _, r := range Known() {
		if !r.Custom {
			continue
		}
		for i := range s.CustomObjects(r) {
			if err := emit(s.CustomObjects(r)[i].Object); err != nil {
				return err
			}
		}
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// SaveFile writes the snapshot to path, gzipped when the name ends in .gz.
// It writes to a temporary file first, so a failed write leaves nothing
// behind and never a half-written snapshot under the final name.
func (s *Snapshot) SaveFile(path string) error {
	return writeFileAtomic(path, s.Write)
}

// writeFileAtomic writes what write produces to path, through gzip when the
// name ends in .gz, by way of a temporary file in the same directory that
// is renamed into place only once everything is written: a failed write
// leaves nothing behind.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubegap-snapshot-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var w io.Writer = tmp
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(tmp)
		w = zw
	}
	if err = write(w); err != nil {
		return fmt.Errorf("writing snapshot: %w", err)
	}
	if zw != nil {
		if err = zw.Close(); err != nil {
			return err
		}
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
