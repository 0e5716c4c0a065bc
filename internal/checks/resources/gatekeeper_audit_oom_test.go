package resources

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// The chart's 512Mi audit is flagged, citing the case; the webhook
// Deployment with the same image and limit is not the audit.
func TestGatekeeperAuditOOMGap(t *testing.T) {
	const file = "gatekeeper-audit-oom/gap.yaml"
	s := checktest.Complete(checktest.Load(t, file))
	fs, _, ok := checktest.Run(t, gatekeeperAuditOOMCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || fs[0].Severity != finding.Medium || fs[0].Cases[0] != gatekeeperAuditCase ||
		!checktest.HasObject(fs, "Deployment", "gatekeeper-system", "gatekeeper-audit") {
		t.Fatalf("findings %v, want one medium on gatekeeper-audit", fs)
	}
	if ev := strings.Join(fs[0].Evidence, "\n"); !strings.Contains(ev, "--audit-chunk-size=0") {
		t.Errorf("evidence %q: want the chunk-size arg quoted", ev)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// A 2Gi audit is quiet.
func TestGatekeeperAuditOOMClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gatekeeper-audit-oom/clean.yaml"))
	checktest.Quiet(t, gatekeeperAuditOOMCheck(), s)
}

// The message says admission is spared only for an audit in its own pod;
// an audit container that also serves the webhook is said to take it down.
func TestGatekeeperAuditAdmissionNote(t *testing.T) {
	own := auditAdmissionNote([]string{"--operation=audit", "--operation=status"})
	both := auditAdmissionNote([]string{"--operation=audit", "--operation=webhook"})
	if !strings.Contains(own, "admission keeps working") {
		t.Errorf("own pod: %q", own)
	}
	if strings.Contains(both, "keeps working") || !strings.Contains(both, "takes admission down") {
		t.Errorf("audit with webhook: %q", both)
	}
}
