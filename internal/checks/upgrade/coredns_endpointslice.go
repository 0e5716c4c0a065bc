package upgrade

import (
	"errors"
	"fmt"
	"path"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

// ruleCoreDNSSliceAtStart: a CoreDNS that chose EndpointSlice v1beta1 when
// it started keeps watching it after the upgrade removes it.
const ruleCoreDNSSliceAtStart = "coredns-endpointslice-at-start"

const caseCoreDNSSliceV1beta1 = "coredns-endpointslice-v1beta1-after-upgrade-2023"

type corednsSliceFacts struct {
	From         string   `json:"from"`
	Until        string   `json:"until"`
	ServedV1From string   `json:"servedV1From"`
	Case         string   `json:"case"`
	Sources      []string `json:"sources"`

	from, until, servedV1 check.KubeVersion
}

func parseCoreDNSSliceFacts(f *facts) error {
	c := &f.CoreDNSEndpointSliceAtStart
	if c.From == "" && c.Until == "" && c.ServedV1From == "" && c.Case == "" && len(c.Sources) == 0 {
		return nil // no such section: the rule has nothing to judge with
	}
	var ok1, ok2, ok3 bool
	c.from, ok1 = check.ParseKubeVersion(c.From)
	c.until, ok2 = check.ParseKubeVersion(c.Until)
	c.servedV1, ok3 = check.ParseKubeVersion(c.ServedV1From)
	if !ok1 || !ok2 || !ok3 || c.Case == "" {
		return errors.New("upgrade-facts.yaml: corednsEndpointSliceAtStart needs from, until, servedV1From and case")
	}
	if f.removed["discovery.k8s.io/v1beta1/EndpointSlice"] == nil {
		return errors.New("upgrade-facts.yaml: corednsEndpointSliceAtStart needs the discovery.k8s.io/v1beta1 EndpointSlice removal row")
	}
	return sourced("upgrade-facts.yaml", "corednsEndpointSliceAtStart", c.Sources)
}

// coreDNSSliceAtStart flags, before an upgrade from a minor that serves no
// discovery.k8s.io/v1 EndpointSlices to one that no longer serves v1beta1,
// the kube-system Deployments running a CoreDNS release that picks the
// version once at start: unless its pods restart after the upgrade, it
// keeps watching an API that is gone. A control plane known only by a lower
// bound below 1.21 cannot show that v1 is not served: the rule is partial.
func coreDNSSliceAtStart(ctx *check.Context, f *facts, cur check.CurrentVersion, t check.KubeVersion) []finding.Finding {
	c := f.CoreDNSEndpointSliceAtStart
	removal := f.removed["discovery.k8s.io/v1beta1/EndpointSlice"]
	if c.Case == "" || removal == nil {
		return nil
	}
	cp := cur.Lower
	if t.Less(removal.removedIn) || (cur.Known() && !cp.Less(c.servedV1)) {
		// The target still serves v1beta1, or the control plane serves v1
		// already (its version, or a lower bound of it, is at least 1.21).
		return nil
	}
	s := ctx.Snapshot
	var out []finding.Finding
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Namespace != "kube-system" {
			continue
		}
		for _, ctr := range d.Spec.Template.Spec.Containers {
			repo, tag, _ := check.ImageParts(ctr.Image)
			if path.Base(repo) != "coredns" {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok || v.Less(c.from) || !v.Less(c.until) {
				continue
			}
			if !cur.Exact {
				ctx.Incomplete(ruleCoreDNSSliceAtStart, "CoreDNS %s runs in Deployment %s/%s, but whether the API server serves discovery.k8s.io/v1 EndpointSlices now is unknown (%s)", tag, d.Namespace, d.Name, cur.Text())
				continue
			}
			ref := check.Ref("apps/v1", "Deployment", d)
			fd := finding.Finding{
				Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightDuring,
				Title: fmt.Sprintf("CoreDNS %s chose EndpointSlice v1beta1 at start and will keep watching it after the upgrade to %s", tag, t.MinorString()),
				Message: fmt.Sprintf("Deployment %s/%s runs CoreDNS %s, a release that watches EndpointSlices and picks their API version once, "+
					"when its kubernetes plugin starts (coredns issue 6176's analysis). The API server is at %s, which serves no "+
					"discovery.k8s.io/v1 EndpointSlices (served from %s), so it watches v1beta1, which %s no longer serves. If its pods "+
					"are not restarted after the control plane moves, it keeps listing an API that is gone: "+
					"\"Failed to list *v1beta1.EndpointSlice\" in its log, and endpoints it answers from stop updating.",
					d.Namespace, d.Name, tag, cp.MinorString(), c.ServedV1From, removal.RemovedIn),
				Objects: []finding.ObjectRef{ref},
				Evidence: []string{
					fmt.Sprintf("control plane %s (%s)", cp.MinorString(), cur.Basis),
					fmt.Sprintf("discovery.k8s.io/v1beta1 EndpointSlice removed in %s (%v)", removal.RemovedIn, removal.Sources),
					fmt.Sprintf("CoreDNS %s to before %s chooses the EndpointSlice version at start (%v)", c.From, c.Until, c.Sources),
				},
				Remediation: fmt.Sprintf("Restart CoreDNS (kubectl -n %s rollout restart deployment %s) once the control plane serves discovery.k8s.io/v1, "+
					"and again after the upgrade, or update it to CoreDNS %s or later, which watches only v1.", d.Namespace, d.Name, c.Until),
				Cases: []string{c.Case},
			}
			fd.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField("Deployment", "", ctr.Name, "image"), ctr.Image)))
			out = append(out, fd)
		}
	}
	return out
}
