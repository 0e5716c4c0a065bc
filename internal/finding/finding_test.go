package finding

import (
	"encoding/json"
	"testing"
)

func TestSeverityRoundTrip(t *testing.T) {
	for _, s := range Severities() {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got Severity
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got != s {
			t.Errorf("round trip of %v gave %v", s, got)
		}
	}
	if _, err := ParseSeverity("urgent"); err == nil {
		t.Error("ParseSeverity accepted an unknown name")
	}
	if s, err := ParseSeverity("HIGH"); err != nil || s != High {
		t.Errorf("ParseSeverity(HIGH) = %v, %v", s, err)
	}
}

func TestStableID(t *testing.T) {
	a := ObjectRef{APIVersion: "v1", Kind: "Node", Name: "a"}
	b := ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "kube-system", Name: "b"}
	base := Finding{Check: "c", Title: "3 nodes run X", Objects: []ObjectRef{a, b}}
	id := StableID(base)
	if len(id) != 19 || id[:3] != "kg-" {
		t.Fatalf("id %q is not kg- and 16 hex digits", id)
	}
	same := base
	same.Objects = []ObjectRef{b, a}
	same.Title = "4 nodes run X"
	same.Message = "another message"
	if StableID(same) != id {
		t.Error("object order or a count in the title changed the ID")
	}
	for name, f := range map[string]Finding{
		"other check":   {Check: "d", Title: base.Title, Objects: base.Objects},
		"other objects": {Check: "c", Title: base.Title, Objects: []ObjectRef{a}},
		"other title":   {Check: "c", Title: "3 nodes run Y", Objects: base.Objects},
		"a rule":        {Check: "c", Rule: "r", Title: base.Title, Objects: base.Objects},
	} {
		if StableID(f) == id {
			t.Errorf("%s: same ID", name)
		}
	}
	r1 := Finding{Check: "c", Rule: "r", Title: "one", Objects: []ObjectRef{a}}
	r2 := Finding{Check: "c", Rule: "r", Title: "two", Objects: []ObjectRef{a}}
	if StableID(r1) != StableID(r2) {
		t.Error("with a rule, the title should not matter")
	}
}
