// Package apimetrics reads what kube-apiserver prints on GET /metrics (the
// Prometheus text exposition format, as `kubectl get --raw /metrics`
// saves it) and keeps only the metric families asked for. The text is
// parsed with Prometheus' own parser (github.com/prometheus/common/expfmt),
// one family at a time, so that a file of tens of megabytes is checked
// whole while memory holds one family and the series kept.
package apimetrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DeprecatedAPIs is the gauge kube-apiserver sets to 1 for each deprecated
// group/version/resource/subresource some client requested since the
// server started, with the release that removes it (empty when none is
// announced). See the Kubernetes deprecation policy.
const DeprecatedAPIs = "apiserver_requested_deprecated_apis"

// The storage database's size, the file etcd physically allocated, as
// kube-apiserver exports it: etcd_db_total_size_in_bytes (label endpoint)
// up to 1.25, renamed apiserver_storage_db_total_size_in_bytes in 1.26
// (kubernetes/kubernetes#113310) and deprecated in 1.28 for
// apiserver_storage_size_bytes (label storage_cluster_id,
// kubernetes/kubernetes#118812; STABLE in
// staging/src/k8s.io/apiserver/pkg/storage/etcd3/metrics/metrics.go).
const (
	StorageSize        = "apiserver_storage_size_bytes"
	StorageDBTotalSize = "apiserver_storage_db_total_size_in_bytes"
	EtcdDBTotalSize    = "etcd_db_total_size_in_bytes"
)

// StorageSizeFamilies are the three names, newest first.
var StorageSizeFamilies = []string{StorageSize, StorageDBTotalSize, EtcdDBTotalSize}

// RequestDuration is kube-apiserver's histogram of request latency, by
// verb, group, version, resource, subresource and scope (STABLE in
// staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go). Read
// keeps only its series of single-object writes (see sampleFilters).
const RequestDuration = "apiserver_request_duration_seconds"

// sampleFilters narrow a kept family to the samples kubegap reads, before
// they are parsed: apiserver_request_duration_seconds is the largest family
// of a busy API server (24 lines a series, most of them reads). On 2
// cores, a synthetic 9.6 MB family of 2,000 series, a sixth of them
// writes at scope resource, took 0.31 to 0.35 s and 175 MB parsed whole,
// 0.07 s and 31 MB filtered. A sample left out is still checked to be the
// family's own line.
var sampleFilters = map[string]func(line []byte) bool{RequestDuration: isWriteAtResource}

// WriteVerbs are the mutating verbs whose single-object latency is kept:
// the filter here and the snapshot's reading of the series share them.
var WriteVerbs = []string{"POST", "PUT", "PATCH", "DELETE"}

// writeVerbs are WriteVerbs' label pairs, as a sample line holds them.
var writeVerbs = func() [][]byte {
	out := make([][]byte, len(WriteVerbs))
	for i, v := range WriteVerbs {
		out[i] = []byte(`verb="` + v + `"`)
	}
	return out
}()

// isWriteAtResource reports whether a sample line is of a single-object
// write: scope="resource" and a mutating verb among its labels.
func isWriteAtResource(line []byte) bool {
	if !bytes.Contains(line, []byte(`scope="resource"`)) {
		return false
	}
	for _, v := range writeVerbs {
		if bytes.Contains(line, v) {
			return true
		}
	}
	return false
}

// apiServerFamily is a family every kube-apiserver exports: a file
// without it is not the API server's /metrics.
const apiServerFamily = "apiserver_request_total"

// Limits on one line and one family, so that a file that is not metrics
// (or a hostile one) cannot make the reader hold it whole.
const (
	maxLine   = 1 << 20
	maxFamily = 64 << 20
)

// Series is one sample of a kept family: its labels and value. For a
// histogram, Value is the sample count and Buckets its cumulative buckets.
type Series struct {
	Labels  map[string]string
	Value   float64
	Buckets []Bucket
}

// Bucket is one cumulative histogram bucket: how many samples were at
// most UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// ValueText prints the value as the exposition does for integers ("1").
func (s Series) ValueText() string { return strconv.FormatFloat(s.Value, 'f', -1, 64) }

// Looks reports whether the start of a file is a Prometheus text
// exposition: its first line that is not blank is a # HELP or # TYPE
// comment, as kube-apiserver's output always starts.
func Looks(head []byte) bool {
	for _, line := range bytes.Split(head, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		return bytes.HasPrefix(line, []byte("# HELP ")) || bytes.HasPrefix(line, []byte("# TYPE "))
	}
	return false
}

// Error is a file that is not a whole kube-apiserver /metrics output.
type Error struct {
	Line int // 1-based; 0 for the whole file
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Read reads a kube-apiserver /metrics output and returns the series of
// the families named in keep, by family name. Every family is parsed,
// whether kept or not, so that garbage anywhere is an error; the file
// must end with a newline (the exposition ends every line with one), name
// the API server's request counter, and, since kube-apiserver prints its
// families sorted by name, reach past every kept family's name: a kept
// family that is absent from a file that stops before its place is a cut
// file, not "no series".
func Read(r io.Reader, keep ...string) (map[string][]Series, error) {
	return ReadWith(r, keep, nil)
}

// ReadWith is Read keeping the families of also too, without requiring
// the file to reach their place: families that some API server versions
// export and others do not (the storage size series were renamed twice),
// whose absence proves nothing either way.
func ReadWith(r io.Reader, keep, also []string) (map[string][]Series, error) {
	checked := keep
	keep = append(slices.Clip(keep), also...)
	br := bufio.NewReaderSize(r, 64<<10)
	out := map[string][]Series{}
	var (
		chunk     bytes.Buffer
		chunkName string
		chunkLine int // line the chunk starts on
		line      int
		last      string // name of the last family begun
		sorted    = true
		sawServer bool
		lastByte  byte
	)
	flush := func() error {
		if chunk.Len() == 0 {
			return nil
		}
		if chunkName != apiServerFamily && !slices.Contains(keep, chunkName) {
			// A family not kept is only checked to be its own lines:
			// parsing every histogram of a busy API server would cost
			// seconds for series nobody reads.
			if err := ownLines(chunk.Bytes(), chunkName, chunkLine); err != nil {
				return err
			}
			chunk.Reset()
			return nil
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(chunk.Bytes()))
		if err != nil {
			return &Error{Line: chunkLine, Msg: "not the Prometheus text format kubectl get --raw /metrics prints: " + parseMessage(err, chunkLine)}
		}
		for name, mf := range fams {
			if name == apiServerFamily {
				sawServer = true
			}
			if slices.Contains(keep, name) {
				out[name] = append(out[name], seriesOf(mf)...)
			}
		}
		chunk.Reset()
		return nil
	}
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &Error{Line: line + 1, Msg: fmt.Sprintf("a line longer than %d bytes: not /metrics output", maxLine)}
		}
		if len(b) > 0 {
			line++
			lastByte = b[len(b)-1]
			if name, ok := familyStart(b); ok && name != chunkName {
				if err := flush(); err != nil {
					return nil, err
				}
				if name < last {
					sorted = false
				}
				chunkName, chunkLine, last = name, line, max(last, name)
			}
			if chunk.Len()+len(b) > maxFamily {
				return nil, &Error{Line: line, Msg: fmt.Sprintf("metric family %s is larger than %d MiB", chunkName, maxFamily>>20)}
			}
			if chunk.Len() == 0 && chunkLine == 0 {
				chunkLine = line
			}
			if keepSample, ok := sampleFilters[chunkName]; ok && !isCommentOrBlank(b) && slices.Contains(keep, chunkName) && !keepSample(b) {
				if !ownLine(bytes.TrimRight(b, "\r\n"), chunkName) {
					return nil, &Error{Line: line, Msg: "not the Prometheus text format kubectl get --raw /metrics prints: a line that is no sample of metric family " + chunkName}
				}
				// A blank line in its place: the parser skips it, and
				// the lines after it keep their numbers in errors.
				chunk.WriteByte('\n')
			} else {
				chunk.Write(b)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if line == 0 {
		return nil, &Error{Msg: "file is empty"}
	}
	if lastByte != '\n' {
		return nil, &Error{Line: line, Msg: "the last line is cut short (no newline): the file is truncated"}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if !sawServer {
		return nil, &Error{Msg: "no " + apiServerFamily + " series: not kube-apiserver's /metrics (save it with kubectl get --raw /metrics)"}
	}
	for _, k := range checked {
		if _, ok := out[k]; !ok && sorted && last < k {
			return nil, &Error{Line: line, Msg: fmt.Sprintf("the file ends at metric family %s, before %s would come (kube-apiserver lists families by name): it is truncated", last, k)}
		}
	}
	return out, nil
}

// ownLines checks that every line of a family's block is a comment or a
// sample of that family (its name, or name_bucket, _sum, _count, then
// labels or a space), as the exposition format lays families out.
func ownLines(block []byte, name string, from int) error {
	for i, line := range bytes.Split(bytes.TrimSuffix(block, []byte("\n")), []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if !ownLine(line, name) {
			return &Error{Line: from + i, Msg: "not the Prometheus text format kubectl get --raw /metrics prints: a line that is no sample of metric family " + name}
		}
	}
	return nil
}

// isCommentOrBlank reports whether a line is a comment or holds only
// white space, which the parser skips.
func isCommentOrBlank(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] == '#'
}

// ownLine reports whether a sample line (no newline) is of the family
// name: its name, or name_bucket, _sum, _count, then labels or a space.
func ownLine(line []byte, name string) bool {
	rest, ok := bytes.CutPrefix(line, []byte(name))
	if ok {
		for _, suffix := range []string{"_bucket", "_sum", "_count", "_total", "_created"} {
			if r, cut := bytes.CutPrefix(rest, []byte(suffix)); cut {
				rest = r
				break
			}
		}
	}
	return ok && len(rest) > 0 && (rest[0] == '{' || rest[0] == ' ')
}

// familyStart reads the family a # HELP or # TYPE line names.
func familyStart(b []byte) (string, bool) {
	if len(b) == 0 || b[0] != '#' {
		return "", false // a sample line: no string made for it
	}
	s := string(bytes.TrimRight(b, "\r\n"))
	for _, p := range []string{"# HELP ", "# TYPE "} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			name, _, _ := strings.Cut(strings.TrimLeft(rest, " \t"), " ")
			return name, name != ""
		}
	}
	return "", false
}

// parseMessage is the parser's error with its line counted from the
// file's start rather than the family's.
func parseMessage(err error, from int) string {
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %s", from+pe.Line-1, pe.Msg)
	}
	return err.Error()
}

func seriesOf(mf *dto.MetricFamily) []Series {
	var out []Series
	for _, m := range mf.GetMetric() {
		s := Series{Labels: map[string]string{}}
		for _, lp := range m.GetLabel() {
			s.Labels[lp.GetName()] = lp.GetValue()
		}
		switch {
		case m.Gauge != nil:
			s.Value = m.GetGauge().GetValue()
		case m.Counter != nil:
			s.Value = m.GetCounter().GetValue()
		case m.Untyped != nil:
			s.Value = m.GetUntyped().GetValue()
		case m.Histogram != nil:
			h := m.GetHistogram()
			s.Value = float64(h.GetSampleCount())
			for _, b := range h.GetBucket() {
				s.Buckets = append(s.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: float64(b.GetCumulativeCount())})
			}
		default:
			continue // summaries: no family kept here is one
		}
		out = append(out, s)
	}
	return out
}
