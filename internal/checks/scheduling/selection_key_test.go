package scheduling

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSelectionKeyAsFmt holds appendKey to the fmt formatting it replaced.
func TestSelectionKeyAsFmt(t *testing.T) {
	old := func(s selection) string {
		var b strings.Builder
		if s.noTerms {
			b.WriteString("none")
		}
		for _, t := range s.terms {
			b.WriteString("|")
			for _, r := range t {
				fmt.Fprintf(&b, "%v%s\x00%s\x00%s\x01", r.field, r.key, r.op, strings.Join(r.values, "\x02"))
			}
		}
		return b.String()
	}
	sels := []selection{
		{},
		{noTerms: true},
		{terms: []term{{{key: "disktype", op: corev1.NodeSelectorOpIn, values: []string{"ssd"}}}}},
		{terms: []term{{{key: "a", op: corev1.NodeSelectorOpIn, values: []string{"x", "y"}}, {key: "metadata.name", op: corev1.NodeSelectorOpNotIn, values: []string{"n1"}, field: true}},
			{{key: "b", op: corev1.NodeSelectorOpExists}}}},
		{terms: []term{{}, {{key: "c", op: corev1.NodeSelectorOpGt, values: []string{"3"}}}}},
	}
	buf := []byte("left over")
	for i, s := range sels {
		buf = s.appendKey(buf[:0])
		if got, want := string(buf), old(s); got != want {
			t.Errorf("selection %d: key %q, want %q", i, got, want)
		}
	}
}
