package finding

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestEvidenceItemLine(t *testing.T) {
	n := func(name string) ObjectRef { return ObjectRef{APIVersion: "v1", Kind: "Node", Name: name} }
	for _, tc := range []struct {
		item EvidenceItem
		want string
	}{
		{Quote(n("a"), Value("status.nodeInfo.kubeletVersion", "v1.34.3"), Value("spec.unschedulable", true)),
			"Node/a: status.nodeInfo.kubeletVersion=v1.34.3, spec.unschedulable=true"},
		{EvidenceItem{Objects: []ObjectRef{n("a"), n("b")}, More: 1, Fields: []Field{Absent("spec.taints")}},
			"3 Nodes (a, b and 1 more): spec.taints absent"},
		{EvidenceItem{Objects: []ObjectRef{n("a"), {Kind: "Pod", Namespace: "x", Name: "p"}}, Fields: []Field{Value("metadata.name", "a")}},
			"2 objects (Node/a, Pod/x/p): metadata.name=a"},
		{EvidenceItem{Objects: []ObjectRef{{Kind: "NetworkPolicy", Namespace: "x", Name: "p"}, {Kind: "NetworkPolicy", Namespace: "y", Name: "p"}},
			Fields: []Field{Value("spec.podSelector", "{}")}}, "2 NetworkPolicies (x/p, y/p): spec.podSelector={}"},
		{Quote(n("a"), Entry("metadata.labels[node-role.kubernetes.io/control-plane]", "")),
			`Node/a: metadata.labels[node-role.kubernetes.io/control-plane]=""`},
	} {
		if got := tc.item.String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// TestGrouperGroupsByValue: objects are grouped by their values, never
// by the first object's, and the list is capped with a count.
func TestGrouperGroupsByValue(t *testing.T) {
	var g Grouper
	for i := range 7 {
		v := "v1.34.3"
		if i%2 == 1 {
			v = "v1.35.4"
		}
		g.Add(ObjectRef{Kind: "Node", Name: fmt.Sprint("n", i)}, Value("status.nodeInfo.kubeletVersion", v))
	}
	items := g.Items()
	if len(items) != 2 || items[0].Count() != 4 || items[1].Count() != 3 {
		t.Fatalf("items %v", items)
	}
	if want := "3 Nodes (n1, n3, n5): status.nodeInfo.kubeletVersion=v1.35.4"; items[1].String() != want {
		t.Errorf("got %q, want %q", items[1], want)
	}
	var big Grouper
	for i := range MaxItemObjects + 5 {
		big.Add(ObjectRef{Kind: "Node", Name: fmt.Sprint("n", i)}, Value("x", "y"))
	}
	if it := big.Items()[0]; len(it.Objects) != MaxItemObjects || it.More != 5 || !strings.HasPrefix(it.String(), "55 Nodes (n0,") {
		t.Errorf("capped item: %d objects, %d more, %q", len(it.Objects), it.More, it)
	}
}

// TestAddEvidenceKeepsLinesInStep: the JSON carries each item and its
// line, so a consumer of the old evidence strings reads the same quote.
func TestAddEvidenceKeepsLinesInStep(t *testing.T) {
	f := Finding{Evidence: []string{"free text"}}
	it := Quote(ObjectRef{APIVersion: "v1", Kind: "Node", Name: "a"}, Value("status.nodeInfo.kubeletVersion", "v1.34.3"))
	f.AddEvidence(it)
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Evidence      []string       `json:"evidence"`
		EvidenceItems []EvidenceItem `json:"evidenceItems"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Evidence) != 2 || back.Evidence[1] != it.String() || len(back.EvidenceItems) != 1 ||
		back.EvidenceItems[0].Fields[0].Value != "v1.34.3" {
		t.Errorf("round trip: %s", b)
	}
}
