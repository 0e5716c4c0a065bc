package check

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestSelectorOfAgreesWithApimachinery holds SelectorOf to
// LabelSelectorAsSelector: the same selector text, the same matches and an
// error for exactly the same inputs, on plain and invalid keys and values.
func TestSelectorOfAgreesWithApimachinery(t *testing.T) {
	long := strings.Repeat("a", 63)
	keys := []string{"app", "app.kubernetes.io/name", "example.com/x", "A_b.c-d", long, long + "a", "/x", "x/", "a/b/c",
		"Example.com/x", "ex..com/x", "-ex.com/x", "ex-.com/x", "ex.com./x", "a b", "", "-a", "a-", "k8s.io/" + long,
		strings.Repeat("a.", 127) + "a/x"}
	values := []string{"", "web", "Web_1.0-b", long, long + "a", "-a", "a-", "a b", "ü", "a/b"}
	for _, k := range keys {
		for _, v := range values {
			ls := &metav1.LabelSelector{MatchLabels: map[string]string{k: v, "tier": "front"}}
			want, wantErr := metav1.LabelSelectorAsSelector(ls)
			got, gotErr := SelectorOf(ls)
			if (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%q=%q: error %v, LabelSelectorAsSelector's %v", k, v, gotErr, wantErr)
				continue
			}
			if wantErr != nil {
				continue
			}
			if got.String() != want.String() {
				t.Errorf("%q=%q: %q, want %q", k, v, got.String(), want.String())
			}
			for _, set := range []labels.Set{{k: v, "tier": "front"}, {k: v}, {k: v + "x", "tier": "front"}} {
				if got.Matches(set) != want.Matches(set) {
					t.Errorf("%q=%q on %v: %v, want %v", k, v, set, got.Matches(set), want.Matches(set))
				}
			}
		}
	}
	for _, ls := range []*metav1.LabelSelector{nil, {}, {MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In", Values: []string{"b"}}}}} {
		want, _ := metav1.LabelSelectorAsSelector(ls)
		got, _ := SelectorOf(ls)
		if got.String() != want.String() || got.Empty() != want.Empty() {
			t.Errorf("%v: %q (empty %v), want %q (empty %v)", ls, got.String(), got.Empty(), want.String(), want.Empty())
		}
	}
}
