package agents

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/credential-brokers.yaml
var brokerFactsYAML []byte

type brokerFact struct {
	Name            string   `json:"name"`
	Images          []string `json:"images"`
	Mode            string   `json:"mode,omitempty"`
	DurationFlag    string   `json:"durationFlag"`
	DurationDefault string   `json:"durationDefault"`
	RefreshFlag     string   `json:"refreshFlag,omitempty"`
	RefreshDefault  string   `json:"refreshDefault,omitempty"`
	STSFactor       int      `json:"stsFactor"`
	Fact            string   `json:"fact"`
	Sources         []string `json:"sources"`
}

type sdkFact struct {
	Name      string   `json:"name"`
	Threshold string   `json:"threshold"`
	Fact      string   `json:"fact"`
	Sources   []string `json:"sources"`
}

type brokerFacts struct {
	Brokers []brokerFact `json:"brokers"`
	SDKs    []sdkFact    `json:"sdks"`
}

var loadBrokerFacts = check.Facts("credential broker facts", brokerFactsYAML, func(f *brokerFacts) error {
	if len(f.Brokers) == 0 || len(f.SDKs) == 0 {
		return errors.New("credential broker facts: brokers and sdks are required")
	}
	return nil
})

// roleAnnotation is how kiam and kube2iam pods ask for an IAM role.
const roleAnnotation = "iam.amazonaws.com/role"

const brokerCheckID = "credential-broker-duration"

func credentialBrokerDurationCheck() check.Check {
	return check.Check{
		ID:       brokerCheckID,
		Title:    "Pod IAM brokers whose credentials are always due for refresh in the AWS Java SDK",
		Severity: finding.Medium,
		Description: "Reads the arguments of kiam servers and kube2iam agents (DaemonSets and Deployments) and works out " +
			"how much lifetime the credentials they hand to pods have left: kiam serves sessions of --session-duration " +
			"until --session-refresh before expiry, kube2iam sessions of twice --iam-role-session-ttl for one TTL. The " +
			"AWS SDK for Java 1.x fetches new credentials whenever those it holds expire within 15 minutes, so with " +
			"kiam's defaults (15 minutes) every AWS call of a JVM service first calls the metadata endpoint. Medium " +
			"when that holds for every call, low when it holds for part of each session or when pods were read " +
			"completely and none carries iam.amazonaws.com/role. Which SDK an image carries is " +
			"not visible in the API: the finding is exposure, counted in pods annotated iam.amazonaws.com/role.",
		Reads: []check.Input{
			check.Optional(snapshot.DaemonSets),
			check.Optional(snapshot.Deployments),
			check.Optional(snapshot.Pods),
		},
		Rules: []check.Rule{
			{ID: "broker-session-lifetime", Summary: "kiam or kube2iam serving credentials with 15 minutes or less left",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Deployments}},
		},
		Cases: check.Prevents("adevinta-kiam-sdk-credential-latency-2019"),
		Run:   runCredentialBrokerDuration,
	}
}

// broker is one broker workload found in the snapshot.
type broker struct {
	kind string
	obj  metav1.Object
	c    *corev1.Container
	fact brokerFact
}

func findBrokers(s *snapshot.Snapshot, facts *brokerFacts) []broker {
	var out []broker
	add := func(kind string, obj metav1.Object, spec *corev1.PodSpec) {
		for i := range spec.Containers {
			c := &spec.Containers[i]
			name := check.ImageName(c.Image) // once per container, not per broker
			for j := range facts.Brokers {
				if f := &facts.Brokers[j]; isBroker(c, name, f) {
					out = append(out, broker{kind: kind, obj: obj, c: c, fact: *f})
				}
			}
		}
	}
	for i := range s.DaemonSets {
		add("DaemonSet", &s.DaemonSets[i], &s.DaemonSets[i].Spec.Template.Spec)
	}
	for i := range s.Deployments {
		add("Deployment", &s.Deployments[i], &s.Deployments[i].Spec.Template.Spec)
	}
	return out
}

// isBroker reports whether container c, whose image name
// (check.ImageName) is name, runs broker f.
func isBroker(c *corev1.Container, name string, f *brokerFact) bool {
	if !slices.Contains(f.Images, name) {
		return false
	}
	return f.Mode == "" || slices.Contains(c.Command, f.Mode) || slices.Contains(c.Args, f.Mode)
}

// flagValue returns the value of --flag in args ("--flag=v" or "--flag v").
func flagValue(c *corev1.Container, flag string) (string, bool) {
	args := append(slices.Clone(c.Command), c.Args...)
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
		if a == flag && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// setting reads a duration flag, else its default. ok is false when the
// value is templated or not a duration.
func setting(c *corev1.Container, flag, def string) (d time.Duration, ev string, ok bool) {
	v, set := flagValue(c, flag)
	if !set {
		d, err := time.ParseDuration(def)
		return d, fmt.Sprintf("%s not set: default %s", flag, def), err == nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || check.IsTemplated(v) {
		return 0, "", false
	}
	return d, fmt.Sprintf("%s=%s", flag, v), true
}

// window is how much lifetime the broker's credentials have left when a
// pod gets them: at most hi, at least lo.
func window(b broker) (lo, hi time.Duration, ev []string, ok bool) {
	d, dEv, ok := setting(b.c, b.fact.DurationFlag, b.fact.DurationDefault)
	if !ok {
		return 0, 0, nil, false
	}
	ev = append(ev, dEv)
	hi = d * time.Duration(b.fact.STSFactor)
	lo = hi - d
	if b.fact.RefreshFlag != "" {
		r, rEv, ok := setting(b.c, b.fact.RefreshFlag, b.fact.RefreshDefault)
		if !ok {
			return 0, 0, nil, false
		}
		lo = r
		ev = append(ev, rEv)
	}
	return lo, hi, ev, true
}

func runCredentialBrokerDuration(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadBrokerFacts()
	if err != nil {
		return nil, err
	}
	sdk := facts.SDKs[0]
	threshold, err := time.ParseDuration(sdk.Threshold)
	if err != nil {
		return nil, fmt.Errorf("credential broker facts: %s threshold: %w", sdk.Name, err)
	}
	var out []finding.Finding
	for _, b := range findBrokers(ctx.Snapshot, facts) {
		lo, hi, ev, ok := window(b)
		if !ok {
			ctx.Incomplete("broker-session-lifetime", "%s %s/%s: its session flags are templated or not durations",
				b.kind, b.obj.GetNamespace(), b.obj.GetName())
			continue
		}
		if f, ok := brokerFinding(ctx, b, lo, hi, threshold, sdk, ev); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

func brokerFinding(ctx *check.Context, b broker, lo, hi, threshold time.Duration, sdk sdkFact, ev []string) (finding.Finding, bool) {
	if lo >= threshold {
		return finding.Finding{}, false
	}
	sev := finding.Low
	share := "every call"
	if hi <= threshold {
		sev = finding.Medium
	} else {
		share = fmt.Sprintf("calls in the last %s of every %s session window (our arithmetic)",
			threshold-lo, hi-lo)
	}
	served, none := servedPods(ctx)
	if none {
		sev = finding.Low // nothing asks this broker for a role today
	}
	ev = append(ev, fmt.Sprintf("credentials handed to pods have between %s and %s left", lo, hi),
		strings.TrimSpace(b.fact.Fact), strings.TrimSpace(sdk.Fact), served)
	ref := check.Ref("apps/v1", b.kind, b.obj)
	f := finding.Finding{
		Check:    brokerCheckID,
		Severity: sev,
		Title: fmt.Sprintf("%s %s/%s hands out credentials with at most %s left: %s refreshes on %s",
			b.fact.Name, b.obj.GetNamespace(), b.obj.GetName(), hi, sdk.Name, share),
		Message: fmt.Sprintf("%s %s/%s runs %s, whose credentials reach pods with %s to %s of lifetime left. %s "+
			"fetches new credentials once the ones it holds expire within %s, so a JVM service using it calls the "+
			"metadata endpoint, through %s, before %s: each call waits for that round trip.",
			b.kind, b.obj.GetNamespace(), b.obj.GetName(), b.fact.Name, lo, hi, sdk.Name, threshold, b.fact.Name, share),
		Objects: []finding.ObjectRef{ref},
		Remediation: fmt.Sprintf("Set %s so that credentials keep more than %s left when served (kiam: a longer "+
			"--session-duration and a --session-refresh above 15m; kube2iam: --iam-role-session-ttl of at least 15m), "+
			"within the role's maximum session duration; or move the services to IAM roles for service accounts.",
			b.fact.DurationFlag, threshold),
		Cases: []string{"adevinta-kiam-sdk-credential-latency-2019"},
	}
	// The flags (and their absence, for defaults) are read from the
	// container's command and arguments: those are quoted whole.
	fields := []finding.Field{finding.Value(check.ContainerField(b.kind, "", b.c.Name, "image"), b.c.Image)}
	if len(b.c.Command) > 0 {
		fields = append(fields, finding.Value(check.ContainerField(b.kind, "", b.c.Name, "command"), finding.JSONText(b.c.Command)))
	}
	if len(b.c.Args) > 0 {
		fields = append(fields, finding.Value(check.ContainerField(b.kind, "", b.c.Name, "args"), finding.JSONText(b.c.Args)))
	}
	f.AddEvidence(finding.Quote(ref, fields...))
	f.AddEvidence(rolePods(ctx)...)
	f.Evidence = append(f.Evidence, ev...)
	return f, true
}

// rolePods quotes the pods that ask a broker for a role, pods asking for
// the same role together.
func rolePods(ctx *check.Context) []finding.EvidenceItem {
	var g finding.Grouper
	for i := range ctx.Snapshot.Pods {
		p := &ctx.Snapshot.Pods[i]
		if role := p.Annotations[roleAnnotation]; role != "" {
			g.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				finding.Value("metadata.annotations["+roleAnnotation+"]", role))
		}
	}
	return g.Items()
}

// servedPods says how many pods ask a broker for a role, as evidence;
// none is true only when pods were read completely and none asks.
func servedPods(ctx *check.Context) (text string, none bool) {
	n := 0
	for i := range ctx.Snapshot.Pods {
		if ctx.Snapshot.Pods[i].Annotations[roleAnnotation] != "" {
			n++
		}
	}
	if !ctx.Complete(snapshot.Pods) {
		return fmt.Sprintf("%d pods in the input carry the %s annotation (pods not read completely)", n, roleAnnotation), false
	}
	return fmt.Sprintf("%d pods carry the %s annotation", n, roleAnnotation), n == 0
}
