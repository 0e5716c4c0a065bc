package policyreport

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/report"
)

// Unstructured is Objects as unstructured objects, what a dynamic client
// applies. The empty creationTimestamp the typed metadata carries is
// dropped: it is the server's to set.
func Unstructured(rep *report.Report, f Format, o Options) ([]*unstructured.Unstructured, error) {
	objs := Objects(rep, f, o)
	out := make([]*unstructured.Unstructured, len(objs))
	for i, obj := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding the %s report: %w", f, err)
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		out[i] = u
	}
	return out, nil
}

// Write writes the report objects as a multi-document YAML stream, one
// object a document, for kubectl apply --server-side -f -.
func Write(w io.Writer, rep *report.Report, f Format, o Options) error {
	objs, err := Unstructured(rep, f, o)
	if err != nil {
		return err
	}
	for i, u := range objs {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return fmt.Errorf("encoding the %s report: %w", f, err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
