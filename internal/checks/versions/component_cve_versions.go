package versions

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	cveID           = "component-cve-versions"
	ruleCVEServer   = "apiserver-cve"
	ruleCVEIngress  = "ingress-nginx-cve"
	ruleCVERunc     = "runtime-runc-cve"
	maxCVEEvidence  = 10
	caseIngressCVE  = "ingress-nginx-ingressnightmare-cve-2025-1974"
	caseAPIServer   = "cve-2018-1002105-apiserver-upgrade-proxy-escalation"
	caseRuncCVE     = "runc-leaky-vessels-cve-2024-21626"
	webhookArgument = "--validating-webhook="
)

//go:embed data/component-cve-versions.yaml
var cveData []byte

type cveRow struct {
	CVE       string   `json:"cve"`
	Case      string   `json:"case"`
	Fixed     []string `json:"fixed"`
	Summary   string   `json:"summary"`
	FixedRunc string   `json:"fixedRunc"`
	Runtime   string   `json:"runtime"`
	Sources   []string `json:"sources"`
	fixed     []check.KubeVersion
}

type cveFacts struct {
	APIServer    []*cveRow `json:"apiServer"`
	IngressNginx []*cveRow `json:"ingressNginx"`
	Runc         []*cveRow `json:"runc"`
}

var loadCVEFacts = check.Facts("data/component-cve-versions.yaml", cveData, func(f *cveFacts) error {
	for _, rows := range [][]*cveRow{f.APIServer, f.IngressNginx, f.Runc} {
		for _, r := range rows {
			var err error
			if r.fixed, err = parseAll(r.Fixed); err != nil || len(r.fixed) == 0 {
				return fmt.Errorf("data/component-cve-versions.yaml: %s: %v", r.CVE, err)
			}
		}
	}
	return nil
})

// componentCVEVersionsCheck compares the API server, ingress-nginx
// controllers and node runtimes with the fixed releases of critical CVEs.
func componentCVEVersionsCheck() check.Check {
	return check.Check{
		ID:       cveID,
		Title:    "Components on versions with fixed critical CVEs (API server, ingress-nginx, runc bundled with the runtime)",
		Severity: finding.Critical,
		Description: "Compares versions with the first fixed releases of critical CVEs, from a sourced table: the API server " +
			"version with CVE-2018-1002105 (fixed 1.10.11, 1.11.5, 1.12.3, 1.13.0); ingress-nginx controller images " +
			"(ingress-nginx/controller, and the older nginx-ingress-controller) with IngressNightmare, CVE-2025-1974 (fixed " +
			"1.11.5 and 1.12.1), critical when its validating admission webhook is enabled (the controller's " +
			"--validating-webhook argument or a ValidatingWebhookConfiguration calling its admission Service), high when that " +
			"cannot be told, medium when it is off (the companion annotation-injection CVEs remain); and nodes whose " +
			"containerd or Docker release is older than the first whose own release builds ship runc 1.1.12 " +
			"(CVE-2024-21626: containerd 1.6.28 and 1.7.13, Docker 24.0.9). Distribution packages ship their own runc, and " +
			"vendor builds (a -gke., -eks- or package suffix) may carry backports: the check cannot see either, says so, and " +
			"rates such matches lower. Docker 25.0.0 and 25.0.1 are not judged.",
		// ValidatingWebhookConfigurations only tell whether an ingress-nginx
		// finding's webhook is on or off; without them the finding says it
		// cannot tell, and no silence depends on them.
		Reads: append(check.Needs(snapshot.Nodes, snapshot.Pods, snapshot.Deployments, snapshot.DaemonSets),
			check.Optional(snapshot.ValidatingWebhookConfigurations)),
		Rules: []check.Rule{
			{ID: ruleCVEServer, Summary: "the API server is at or above the fixed releases of the tabled CVEs"},
			{ID: ruleCVEIngress, Summary: "no ingress-nginx controller below the IngressNightmare fixes",
				Needs: []snapshot.Resource{snapshot.Pods, snapshot.Deployments, snapshot.DaemonSets}},
			{ID: ruleCVERunc, Summary: "no node runtime release older than the first that ships runc 1.1.12",
				Needs: []snapshot.Resource{snapshot.Nodes}},
		},
		Cases: check.Prevents(caseAPIServer, caseIngressCVE, caseRuncCVE),
		Run:   runComponentCVEVersions,
	}
}

func runComponentCVEVersions(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	facts, err := loadCVEFacts()
	if err != nil {
		return nil, err
	}
	var out []finding.Finding
	out = append(out, apiServerCVEs(ctx, facts)...)
	out = append(out, ingressNginxCVEs(ctx, s, facts)...)
	out = append(out, runcCVEs(ctx, s, facts)...)
	return out, nil
}

func apiServerCVEs(ctx *check.Context, facts *cveFacts) []finding.Finding {
	s := ctx.Snapshot
	v, evidence, ok := check.ServerVersion(s)
	if !ok {
		ctx.Skip(ruleCVEServer, "the input has no API server version")
		return nil
	}
	raw := s.Source.ServerVersion
	if raw == "" {
		ctx.Incomplete(ruleCVEServer, "the API server version comes from a static pod image, not from the server")
	}
	var out []finding.Finding
	for _, r := range facts.APIServer {
		if !affected(v, r.fixed) {
			continue
		}
		f := finding.Finding{Check: cveID, Severity: finding.Critical, Cases: []string{r.Case},
			// The kubernetes Service in default is the API server's own object.
			Objects:  []finding.ObjectRef{{APIVersion: "v1", Kind: "Service", Namespace: "default", Name: "kubernetes"}},
			Title:    fmt.Sprintf("The API server %s is affected by %s", v, r.CVE),
			Message:  fmt.Sprintf("The API server runs %s, below the fixed releases of %s (%s): %s.", v, r.CVE, strings.Join(r.Fixed, ", "), strings.TrimSpace(r.Summary)),
			Evidence: []string{evidence, r.CVE + " sources: " + strings.Join(r.Sources, ", ")},
			Remediation: "Upgrade the control plane to a supported Kubernetes release; until then, remove aggregated API " +
				"servers that are not needed and revoke pods/exec, attach and portforward from users who should not reach kubelets.",
		}
		// From a static pod's image the version is a field of the input:
		// the kube-apiserver pods are quoted, grouped by image. From the
		// server's own version there is no object to quote.
		if raw == "" {
			f.AddEvidence(apiServerImages(s)...)
		}
		if vendorBuild(raw) {
			f.Severity = finding.High
			f.Message += " The version carries a vendor build marker (" + raw + "): the provider may have backported the fix, which the version does not show."
		}
		out = append(out, f)
	}
	return out
}

// apiServerImages quotes the kube-apiserver containers of kube-system
// pods, where check.ServerVersion reads the version when the server's own
// is not in the input; pods with the same image together.
func apiServerImages(s *snapshot.Snapshot) []finding.EvidenceItem {
	var g finding.Grouper
	check.EachAPIServerContainer(s, func(p *snapshot.Pod, c *snapshot.Container) {
		if _, ok := check.ParseKubeVersion(imageTag(c.Image)); ok {
			g.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				finding.Value(check.ContainerField("Pod", "", c.Name, "image"), c.Image))
		}
	})
	return g.Items()
}

func imageTag(image string) string {
	_, tag, _ := check.ImageParts(image)
	return tag
}

// ingressController recognises ingress-nginx controller images (not F5's
// NGINX Ingress Controller, nginx/nginx-ingress, a different project).
func ingressController(image string) (check.KubeVersion, string, bool) {
	repo, tag, _ := check.ImageParts(image)
	if !strings.HasSuffix(repo, "ingress-nginx/controller") && !strings.HasSuffix(repo, "ingress-nginx/controller-chroot") &&
		!strings.HasSuffix(repo, "/nginx-ingress-controller") {
		return check.KubeVersion{}, tag, false
	}
	v, ok := check.ParseKubeVersion(tag)
	return v, tag, ok || tag == ""
}

func ingressNginxCVEs(ctx *check.Context, s *snapshot.Snapshot, facts *cveFacts) []finding.Finding {
	// Admission Services that a ValidatingWebhookConfiguration calls.
	type caller struct{ configuration, webhook string }
	called := map[string]caller{} // namespace/service -> the webhook calling it
	for i := range s.ValidatingWebhookConfigurations {
		vwc := &s.ValidatingWebhookConfigurations[i]
		for _, w := range vwc.Webhooks {
			if svc := w.ClientConfig.Service; svc != nil {
				called[svc.Namespace+"/"+svc.Name] = caller{vwc.Name, w.Name}
			}
		}
	}
	webhooksKnown := ctx.Complete(snapshot.ValidatingWebhookConfigurations)
	type controller struct {
		ref       finding.ObjectRef
		image     string
		v         check.KubeVersion
		known     bool // command and args read from a template
		container string
		// The container's command and args, as written, for quoting.
		command, args []string
	}
	var ctrls []controller
	fromTemplate := map[string]bool{}
	addSpec := func(ref finding.ObjectRef, spec *corev1.PodSpec) {
		for _, c := range spec.Containers {
			v, tag, ok := ingressController(c.Image)
			if !ok {
				continue
			}
			if tag == "" {
				ctx.Incomplete(ruleCVEIngress, "%s runs an ingress-nginx image without a version tag", ref)
				continue
			}
			ctrls = append(ctrls, controller{ref, c.Image, v, true, c.Name, c.Command, c.Args})
			fromTemplate[ref.Namespace+"/"+check.ImageName(c.Image)] = true
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		addSpec(check.Ref("apps/v1", "Deployment", d), &d.Spec.Template.Spec)
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		addSpec(check.Ref("apps/v1", "DaemonSet", d), &d.Spec.Template.Spec)
	}
	// Pods whose workload is not in the input (one per namespace and version).
	seenPod := map[string]bool{}
	for i := range s.Pods {
		p := &s.Pods[i]
		for _, c := range p.Spec.Containers {
			v, tag, ok := ingressController(c.Image)
			if !ok || tag == "" || fromTemplate[p.Namespace+"/"+check.ImageName(c.Image)] || seenPod[p.Namespace+"/"+c.Image] {
				continue
			}
			seenPod[p.Namespace+"/"+c.Image] = true
			ctrls = append(ctrls, controller{finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, c.Image, v, false, c.Name, nil, nil})
		}
	}
	var out []finding.Finding
	for _, c := range ctrls {
		// The container's argument lists, by the field name they are quoted under.
		argvs := []struct {
			name string
			argv []string
		}{{"command", c.command}, {"args", c.args}}
		for _, r := range facts.IngressNginx {
			if !affected(c.v, r.fixed) {
				continue
			}
			f := finding.Finding{Check: cveID, Cases: []string{r.Case}, Objects: []finding.ObjectRef{c.ref}}
			image := check.ContainerField(c.ref.Kind, "", c.container, "image")
			items := []finding.EvidenceItem{finding.Quote(c.ref, finding.Value(image, c.image))}
			webhook, how := "unknown", ""
			for _, list := range argvs {
				for j, a := range list.argv {
					if c.known && strings.HasPrefix(a, webhookArgument) && len(a) > len(webhookArgument) {
						webhook, how = "on", "argument "+a
						items[0].Fields = append(items[0].Fields,
							finding.Value(check.ContainerField(c.ref.Kind, "", c.container, fmt.Sprintf("%s[%d]", list.name, j)), a))
					}
				}
			}
			if webhook == "unknown" {
				for _, key := range slices.Sorted(maps.Keys(called)) {
					ns, svc, _ := strings.Cut(key, "/")
					if w := called[key]; ns == c.ref.Namespace && strings.HasSuffix(svc, "-admission") {
						webhook, how = "on", fmt.Sprintf("ValidatingWebhookConfiguration %s calls Service %s", w.configuration, key)
						hook := "webhooks[name=" + w.webhook + "].clientConfig.service."
						items = append(items, finding.Quote(finding.ObjectRef{APIVersion: "admissionregistration.k8s.io/v1",
							Kind: "ValidatingWebhookConfiguration", Name: w.configuration},
							finding.Value(hook+"namespace", ns), finding.Value(hook+"name", svc)))
						break
					}
				}
			}
			if webhook == "unknown" && c.known && webhooksKnown {
				webhook, how = "off", "no --validating-webhook argument and no webhook configuration calls an admission Service in "+c.ref.Namespace
				// The absence is read from the container's argument lists.
				for _, list := range argvs {
					if len(list.argv) > 0 {
						items[0].Fields = append(items[0].Fields,
							finding.Value(check.ContainerField(c.ref.Kind, "", c.container, list.name), finding.JSONText(list.argv)))
					}
				}
			}
			f.AddEvidence(items...)
			f.Evidence = append(f.Evidence, r.CVE+" sources: "+strings.Join(r.Sources, ", "))
			switch webhook {
			case "on":
				f.Severity = finding.Critical
				f.Title = fmt.Sprintf("ingress-nginx %s with its admission webhook on is open to %s (IngressNightmare)", c.v, r.CVE)
				f.Message = fmt.Sprintf("%s runs ingress-nginx %s, below the fixes (%s), and its validating admission webhook is "+
					"enabled: %s.", c.ref, c.v, strings.Join(r.Fixed, ", "), strings.TrimSpace(r.Summary))
			case "off":
				f.Severity = finding.Medium
				f.Title = fmt.Sprintf("ingress-nginx %s predates the %s fixes (admission webhook off)", c.v, r.CVE)
				f.Message = fmt.Sprintf("%s runs ingress-nginx %s, below the fixes (%s). Its admission webhook looks disabled, which "+
					"closes the unauthenticated path of %s, but the companion configuration-injection CVEs fixed in the same "+
					"releases still apply to anyone who can create Ingresses.", c.ref, c.v, strings.Join(r.Fixed, ", "), r.CVE)
			default:
				f.Severity = finding.High
				f.Title = fmt.Sprintf("ingress-nginx %s is below the %s fixes", c.v, r.CVE)
				f.Message = fmt.Sprintf("%s runs ingress-nginx %s, below the fixes (%s): %s. Whether its admission webhook is on "+
					"cannot be told from the input; if it is, any pod that can reach it can run code in the controller.",
					c.ref, c.v, strings.Join(r.Fixed, ", "), strings.TrimSpace(r.Summary))
			}
			if how != "" {
				f.Evidence = append(f.Evidence, "admission webhook "+webhook+": "+how)
			}
			f.Remediation = "Upgrade ingress-nginx to " + strings.Join(r.Fixed, " or ") + " or later. Until then, disable the " +
				"validating admission webhook (remove the --validating-webhook arguments and the ValidatingWebhookConfiguration) " +
				"and restrict which pods can reach the controller's admission port with a NetworkPolicy."
			out = append(out, f)
		}
	}
	return out
}

func runcCVEs(ctx *check.Context, s *snapshot.Snapshot, facts *cveFacts) []finding.Finding {
	type group struct {
		row    *cveRow
		raw    string
		vendor bool
		nodes  []*corev1.Node
	}
	groups := map[string]*group{}
	var keys []string
	unknown := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		name, ver, ok := strings.Cut(n.Status.NodeInfo.ContainerRuntimeVersion, "://")
		v, vok := check.ParseKubeVersion(ver)
		if !ok || !vok {
			unknown++
			continue
		}
		for _, r := range facts.Runc {
			if r.Runtime != name || !affected(v, r.fixed) {
				continue
			}
			vendor := vendorBuild(ver) || check.ManagedProvider(n) != ""
			key := fmt.Sprintf("%s|%s|%v", r.Runtime, ver, vendor)
			g := groups[key]
			if g == nil {
				g = &group{row: r, raw: name + "://" + ver, vendor: vendor}
				groups[key] = g
				keys = append(keys, key)
			}
			g.nodes = append(g.nodes, n)
		}
	}
	if unknown > 0 {
		ctx.Incomplete(ruleCVERunc, "%s report no runtime version kubegap can read", check.Plural(unknown, "node", "nodes"))
	}
	sort.Strings(keys)
	var out []finding.Finding
	for _, k := range keys {
		g := groups[k]
		refs, more := check.NodeRefs(g.nodes)
		f := finding.Finding{Check: cveID, Severity: finding.Medium, Cases: []string{g.row.Case}, Objects: refs,
			Title: fmt.Sprintf("%s %s, older than the first release whose builds ship runc %s (%s)",
				check.Plural(len(g.nodes), "node runs", "nodes run"), g.raw, g.row.FixedRunc, g.row.CVE),
			Message: fmt.Sprintf("%s: the %s project's own release builds before %s bundle a runc older than %s, which is open to %s "+
				"(a container breakout through a leaked host file descriptor; an untrusted image is enough). Whether these nodes "+
				"use that bundled runc or a distribution package is not visible through the API%s.",
				g.raw, g.row.Runtime, strings.Join(g.row.Fixed, " / "), g.row.FixedRunc, g.row.CVE, check.MoreText(more)),
			Evidence: []string{g.row.CVE + " sources: " + strings.Join(g.row.Sources, ", ")},
			Remediation: "Check `runc --version` on these nodes (1.1.12 or later is fixed); upgrade the runtime package or move the " +
				"nodes to a node image built after February 2024.",
		}
		// Every node's own version, not the first node's for all.
		f.AddEvidence(check.NodeValues(g.nodes, func(n *corev1.Node) []finding.Field {
			return []finding.Field{finding.Value("status.nodeInfo.containerRuntimeVersion", n.Status.NodeInfo.ContainerRuntimeVersion)}
		})...)
		if g.vendor {
			f.Severity = finding.Low
			f.Message += " The version carries a vendor or provider build: the vendor ships its own runc, which may already be fixed."
		}
		out = append(out, f)
	}
	return out
}
