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
