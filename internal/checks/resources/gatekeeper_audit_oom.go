package resources

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	gatekeeperAuditID   = "gatekeeper-audit-oom"
	ruleAuditMemory     = "audit-memory-limit-reported-exceeded"
	gatekeeperAuditCase = "gatekeeper-audit-oomkilled-violations-never-reported-2020-2026"
	gatekeeperImage     = "openpolicyagent/gatekeeper"
)

//go:embed data/gatekeeper-audit-oom.yaml
var gatekeeperAuditData []byte

type gatekeeperAuditFacts struct {
	ExceededLimits []struct {
		Limit   string   `json:"limit"`
		What    string   `json:"what"`
		Sources []string `json:"sources"`
	} `json:"exceededLimits"`

	limit resource.Quantity
}

var loadGatekeeperAudit = check.Facts("data/gatekeeper-audit-oom.yaml", gatekeeperAuditData, func(f *gatekeeperAuditFacts) error {
	if len(f.ExceededLimits) != 1 {
		return errors.New("gatekeeper-audit-oom: want one exceededLimits row")
	}
	q, err := resource.ParseQuantity(f.ExceededLimits[0].Limit)
	if err != nil {
		return fmt.Errorf("gatekeeper-audit-oom: %w", err)
	}
	f.limit = q
	return nil
})

func gatekeeperAuditOOMCheck() check.Check {
	return check.Check{
		ID:       gatekeeperAuditID,
		Title:    "Gatekeeper's audit container with a memory limit public reports saw it exceed",
		Severity: finding.Medium,
		Description: "Reads Deployments. Gatekeeper's audit (a container of an openpolicyagent/gatekeeper image run " +
			"with --operation=audit) lists every resource its constraints match on each cycle, so its memory grows " +
			"with the cluster. Medium when its memory limit is at or below 512Mi, the upstream chart's limit that " +
			"reports saw exceeded (data/gatekeeper-audit-oom.yaml): the pod is OOM-killed in a loop and constraints " +
			"stop getting audit results; in its own pod, admission keeps working (Gatekeeper's operations docs). " +
			"The args --audit-chunk-size and " +
			"--audit-from-cache are quoted; the check cannot see the cluster's size against the limit.",
		Reads: []check.Input{check.Optional(snapshot.Deployments)},
		Rules: []check.Rule{
			{ID: ruleAuditMemory, Summary: "Gatekeeper's audit has more memory than the limit reports saw exceeded",
				Needs: []snapshot.Resource{snapshot.Deployments}},
		},
		Cases: check.Cite(check.Prevents(gatekeeperAuditCase)),
		Run:   runGatekeeperAuditOOM,
	}
}

func runGatekeeperAuditOOM(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadGatekeeperAudit()
	if err != nil {
		return nil, err
	}
	if !ctx.Complete(snapshot.Deployments) {
		ctx.Incomplete(ruleAuditMemory, "Deployments were not read whole, so a Gatekeeper audit outside those read is not judged")
	}
	var out []finding.Finding
	for i := range ctx.Snapshot.Deployments {
		d := &ctx.Snapshot.Deployments[i]
		for ci, c := range d.Spec.Template.Spec.Containers {
			if !strings.HasSuffix(check.ImageRepository(c.Image), gatekeeperImage) || !hasArg(c.Args, "--operation=audit") {
				continue
			}
			lim, ok := c.Resources.Limits["memory"]
			if !ok || lim.Cmp(facts.limit) > 0 {
				continue
			}
			ref := finding.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name}
			base := fmt.Sprintf("spec.template.spec.containers[%d]", ci)
			fields := []finding.Field{finding.Value(base+".image", c.Image),
				finding.Value(base+".resources.limits.memory", lim.String())}
			for ai, a := range c.Args {
				if strings.HasPrefix(a, "--audit-chunk-size") || strings.HasPrefix(a, "--audit-from-cache") {
					fields = append(fields, finding.Value(fmt.Sprintf("%s.args[%d]", base, ai), a))
				}
			}
			f := finding.Finding{Check: gatekeeperAuditID, Rule: ruleAuditMemory, Severity: finding.Medium,
				Cases: []string{gatekeeperAuditCase}, Objects: []finding.ObjectRef{ref}}
			f.AddEvidence(finding.Quote(ref, fields...))
			f.Title = fmt.Sprintf("Gatekeeper audit %s/%s runs with a %s memory limit", d.Namespace, d.Name, lim.String())
			f.Message = fmt.Sprintf("The audit container %s of %s/%s has a memory limit of %s, at or below the %s that "+
				"reports saw exceeded: %s. The audit lists every resource its constraints match on each cycle, so "+
				"its memory grows with the cluster; once over the limit it is OOM-killed in a loop and constraints' "+
				"status.violations stop being updated. %s",
				c.Name, d.Namespace, d.Name, lim.String(), facts.ExceededLimits[0].Limit, facts.ExceededLimits[0].What,
				auditAdmissionNote(c.Args))
			f.Remediation = "Watch the audit pod's restarts and memory against this limit and raise it with the " +
				"cluster's size (the reports went to 768Mi, 1Gi and 2Gi); on Gatekeeper releases where it is 0, set " +
				"--audit-chunk-size (500 in the reports) so the audit lists resources in pages."
			out = append(out, f)
		}
	}
	return out, nil
}

// auditAdmissionNote says what an audit OOM does to admission. Gatekeeper's
// operations docs say an audit in its own pod can run out of memory without
// affecting the validating webhook; a container that also runs
// --operation=webhook (or the whole of Gatekeeper) takes the webhook down
// with it.
func auditAdmissionNote(args []string) string {
	if hasArg(args, "--operation=webhook") {
		return "This container also serves the validating webhook (--operation=webhook), so each OOM kill takes admission down with it."
	}
	return "The audit runs in its own pod, which Gatekeeper's docs say keeps its OOM kills away from the validating " +
		"webhook: admission keeps working, so nothing else fails."
}

func hasArg(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}
