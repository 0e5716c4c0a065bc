package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// maxReport bounds how much of the input is read: a JSON report of a
// 10,000-pod cluster is a few megabytes.
const maxReport = 256 << 20

// LoadReport reads a kubegap JSON report (audit -o json) whole and checks
// it before anything is written: a file that is not one, is cut short,
// has trailing data or names a namespace Kubernetes could not hold is an
// error.
func LoadReport(r io.Reader, name string) (*report.Report, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxReport+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxReport {
		return nil, fmt.Errorf("%s: larger than %d MiB, not a kubegap JSON report", name, maxReport>>20)
	}
	var head struct{ APIVersion, Kind string }
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: not a kubegap JSON report (audit -o json): %s", name, jsonError(b, err))
	}
	if head.APIVersion != report.APIVersion || head.Kind != report.Kind {
		return nil, fmt.Errorf("%s: not a kubegap JSON report (apiVersion %q, kind %q; want %s %s from audit -o json)",
			name, head.APIVersion, head.Kind, report.APIVersion, report.Kind)
	}
	var rep report.Report
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("%s: not a readable kubegap JSON report: %s", name, jsonError(b, err))
	}
	if rep.Source.Type == snapshot.SourceDemo {
		return nil, fmt.Errorf("%s: a report of the embedded demo cluster (audit --demo), which describes no cluster to publish into", name)
	}
	if len(rep.Checks) == 0 {
		return nil, fmt.Errorf("%s: a kubegap report with no checks, which an audit never writes", name)
	}
	for _, f := range rep.Findings {
		if f.ID == "" || f.Check == "" {
			return nil, fmt.Errorf("%s: a finding without an ID or a check, which an audit never writes", name)
		}
		for _, o := range f.Objects {
			if o.Namespace != "" && len(validation.IsDNS1123Label(o.Namespace)) > 0 {
				return nil, fmt.Errorf("%s: finding %s names namespace %q, which is not a namespace name", name, f.ID, o.Namespace)
			}
		}
	}
	for _, ns := range rep.Source.Scope.Namespaces {
		if len(validation.IsDNS1123Label(ns)) > 0 {
			return nil, fmt.Errorf("%s: the report's scope names namespace %q, which is not a namespace name", name, ns)
		}
	}
	return &rep, nil
}

// jsonError says where the JSON broke, in one line.
func jsonError(b []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && syn.Offset >= int64(len(b))):
		return "it ends early (truncated?)"
	case errors.As(err, &syn):
		return fmt.Sprintf("%v at byte %d", syn, syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s holds a %s", typ.Field, typ.Value)
	}
	return err.Error()
}
