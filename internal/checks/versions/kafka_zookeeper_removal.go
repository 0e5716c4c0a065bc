package versions

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	kafkaZooKeeperID   = "kafka-zookeeper-removal"
	ruleZooKeeperKafka = "zookeeper-kafka"
	caseStrimziZK      = "strimzi-0-46-removes-zookeeper-clusters-unmanageable-2025"
	// kraftAnnotation is Strimzi's switch between ZooKeeper and KRaft.
	kraftAnnotation = "strimzi.io/kraft"
)

//go:embed data/kafka-zookeeper-removal.yaml
var kafkaZooKeeperData []byte

type kafkaZooKeeperFacts struct {
	// Sources back the operator and the states (checktest.FactsSourced).
	Sources  []string `json:"sources"`
	Operator struct {
		Name      string   `json:"name"`
		Images    []string `json:"images"`
		Container string   `json:"container"`
		RemovedIn string   `json:"removedIn"`
		Case      string   `json:"case"`

		removed check.KubeVersion
	} `json:"operator"`
	ZooKeeperStates []string          `json:"zookeeperStates"`
	Facts           []check.Statement `json:"facts"`
}

var loadKafkaZooKeeperFacts = check.Facts("data/kafka-zookeeper-removal.yaml", kafkaZooKeeperData, func(f *kafkaZooKeeperFacts) error {
	const file = "data/kafka-zookeeper-removal.yaml"
	v, ok := check.ParseKubeVersion(f.Operator.RemovedIn)
	if !ok || f.Operator.Name == "" || len(f.Operator.Images) == 0 || f.Operator.Container == "" || f.Operator.Case != caseStrimziZK ||
		len(f.ZooKeeperStates) == 0 || len(f.Facts) == 0 || len(f.Sources) == 0 {
		return fmt.Errorf("%s: operator needs a name, images, a removedIn version and the case %s; zookeeperStates and facts are required", file, caseStrimziZK)
	}
	for _, st := range f.Facts {
		if len(st.Sources) == 0 {
			return fmt.Errorf("%s: fact %q has no source", file, st.What)
		}
		for _, s := range st.Sources {
			if !strings.HasPrefix(s, "https://") {
				return fmt.Errorf("%s: source %q is not an https URL", file, s)
			}
		}
	}
	f.Operator.removed = v
	return nil
})

// kafkaZooKeeperRemovalCheck finds Strimzi Kafka clusters that still keep
// their metadata in ZooKeeper. Strimzi 0.46 and later neither run nor
// migrate them, so the migration has to finish on 0.45 or earlier, before
// the operator moves: once it has, the cluster is no longer reconciled.
func kafkaZooKeeperRemovalCheck() check.Check {
	return check.Check{
		ID:       kafkaZooKeeperID,
		Title:    "Strimzi Kafka clusters still on ZooKeeper, which Strimzi 0.46 and later no longer run or migrate",
		Severity: finding.High,
		Description: "Reads kafka.strimzi.io Kafka resources and the Strimzi cluster operator's Deployment against " +
			"data/kafka-zookeeper-removal.yaml (every row sourced). A Kafka is on ZooKeeper when its " +
			"status.kafkaMetadataState is ZooKeeper or a migration phase before PreKRaft, or, without that status, " +
			"when it declares spec.zookeeper and its strimzi.io/kraft annotation is not enabled. Medium while the " +
			"operator runs a release before 0.46 (quay.io/strimzi/operator): the migration to KRaft has to finish " +
			"before the operator is upgraded, since 0.46 dropped the migration with ZooKeeper. High when the " +
			"operator already runs 0.46 or later: the cluster is not reconciled. An operator image from another " +
			"repository (a vendor build, an OLM bundle) is not versioned: the finding stays medium and says so.",
		Reads: append(check.Needs(snapshot.Deployments), check.Optional(snapshot.StrimziKafkas)),
		Rules: []check.Rule{
			{ID: ruleZooKeeperKafka, Summary: "no Strimzi Kafka cluster still keeps its metadata in ZooKeeper",
				Needs: []snapshot.Resource{snapshot.StrimziKafkas, snapshot.Deployments}},
		},
		Cases: check.Prevents(caseStrimziZK),
		Run:   runKafkaZooKeeperRemoval,
	}
}

// strimziOperator is the newest Strimzi cluster operator the Deployments run.
type strimziOperator struct {
	deploy    *appsv1.Deployment
	container string
	image     string
	version   check.KubeVersion
}

func runKafkaZooKeeperRemoval(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadKafkaZooKeeperFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if !ctx.Present(snapshot.StrimziKafkas) {
		ctx.Skip(ruleZooKeeperKafka, "Strimzi Kafka resources were not read")
		return nil, nil
	}
	var zk []unstructured.Unstructured
	for _, k := range s.CustomObjects(snapshot.StrimziKafkas) {
		if onZooKeeper(k, facts.ZooKeeperStates) {
			zk = append(zk, k)
		}
	}
	if len(zk) == 0 {
		return nil, nil
	}
	sort.Slice(zk, func(i, j int) bool {
		if zk[i].GetNamespace() != zk[j].GetNamespace() {
			return zk[i].GetNamespace() < zk[j].GetNamespace()
		}
		return zk[i].GetName() < zk[j].GetName()
	})
	op := newestStrimziOperator(s.Deployments, facts.Operator.Images, facts.Operator.Container)
	if op == nil && !ctx.Complete(snapshot.Deployments) {
		ctx.Incomplete(ruleZooKeeperKafka, "no Strimzi operator among the Deployments read: its release, and so whether "+
			"these clusters are already unmanaged, is unknown")
	}
	ev := make([]string, 0, len(facts.Facts))
	for _, st := range facts.Facts {
		ev = append(ev, strings.Join(strings.Fields(st.What), " ")+" ("+strings.Join(st.Sources, " ")+")")
	}
	out := make([]finding.Finding, 0, len(zk))
	for i := range zk {
		out = append(out, zooKeeperFinding(&zk[i], op, facts, ev))
	}
	return out, nil
}

// onZooKeeper: the status says ZooKeeper or a migration phase; with no
// state recorded, a declared ensemble not switched to KRaft.
func onZooKeeper(k unstructured.Unstructured, states []string) bool {
	if st, found, _ := unstructured.NestedString(k.Object, "status", "kafkaMetadataState"); found && st != "" {
		return slices.Contains(states, st)
	}
	_, declared, _ := unstructured.NestedFieldNoCopy(k.Object, "spec", "zookeeper")
	return declared && k.GetAnnotations()[kraftAnnotation] != "enabled"
}

// newestStrimziOperator is the newest cluster operator container among the
// Deployments: the entity operators run the same image under other names.
func newestStrimziOperator(deploys []appsv1.Deployment, images []string, container string) *strimziOperator {
	var best *strimziOperator
	for i := range deploys {
		d := &deploys[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			repo, tag, _ := check.ImageParts(c.Image)
			if c.Name != container || !slices.Contains(images, strings.ToLower(repo)) {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				continue
			}
			if best == nil || best.version.Less(v) {
				best = &strimziOperator{deploy: d, container: c.Name, image: c.Image, version: v}
			}
		}
	}
	return best
}

func zooKeeperFinding(k *unstructured.Unstructured, op *strimziOperator, facts *kafkaZooKeeperFacts, ev []string) finding.Finding {
	ref := finding.ObjectRef{APIVersion: snapshot.StrimziKafkas.APIVersion(), Kind: snapshot.StrimziKafkas.Kind,
		Namespace: k.GetNamespace(), Name: k.GetName()}
	state, _, _ := unstructured.NestedString(k.Object, "status", "kafkaMetadataState")
	var fields []finding.Field
	how := "declares spec.zookeeper and is not annotated " + kraftAnnotation + "=enabled"
	if state != "" {
		how = "reports status.kafkaMetadataState " + state
		fields = append(fields, finding.Value("status.kafkaMetadataState", state))
	} else {
		fields = append(fields, finding.Absent("status.kafkaMetadataState"))
		if a, ok := k.GetAnnotations()[kraftAnnotation]; ok {
			fields = append(fields, finding.Entry("metadata.annotations["+kraftAnnotation+"]", a))
		} else {
			fields = append(fields, finding.Absent("metadata.annotations["+kraftAnnotation+"]"))
		}
	}
	removed := facts.Operator.removed.MinorString()
	f := finding.Finding{
		Check: kafkaZooKeeperID, Rule: ruleZooKeeperKafka, Severity: finding.Medium,
		Objects: []finding.ObjectRef{ref},
		Cases:   []string{facts.Operator.Case},
		Remediation: fmt.Sprintf("Migrate the cluster to KRaft (controller node pool, then the %s annotation through "+
			"migration to enabled) while the operator is still before %s, and pin the operator there (Helm chart "+
			"version, OLM channel) until every Kafka reports status.kafkaMetadataState KRaft; only then upgrade it.",
			kraftAnnotation, removed),
	}
	switch {
	case op != nil && !op.version.Less(facts.Operator.removed):
		f.Severity = finding.High
		f.Title = fmt.Sprintf("Kafka %s/%s is still on ZooKeeper under Strimzi %s, which no longer manages it", ref.Namespace, ref.Name, op.version)
		f.Message = fmt.Sprintf("Kafka %s/%s %s. Deployment %s/%s runs %s (%s), and from %s Strimzi neither runs nor migrates "+
			"ZooKeeper-based clusters: the operator leaves this one unreconciled, and the migration code it would need is gone.",
			ref.Namespace, ref.Name, how, op.deploy.Namespace, op.deploy.Name, facts.Operator.Name, op.image, removed)
		f.Remediation = fmt.Sprintf("Go back to a Strimzi release before %s for this cluster (the operator's Deployment, "+
			"or the chart or OLM channel that sets it), migrate it to KRaft there, then upgrade again.", removed)
	case op != nil:
		f.Title = fmt.Sprintf("Kafka %s/%s is still on ZooKeeper; Strimzi %s and later will not manage it", ref.Namespace, ref.Name, removed)
		f.Message = fmt.Sprintf("Kafka %s/%s %s. Deployment %s/%s runs %s (%s), which still handles it, but from %s Strimzi "+
			"neither runs nor migrates ZooKeeper-based clusters: the next operator upgrade past %s, whether chosen or pulled "+
			"in by a Kubernetes upgrade or an unpinned channel, leaves the cluster unmanaged with no path to migrate.",
			ref.Namespace, ref.Name, how, op.deploy.Namespace, op.deploy.Name, facts.Operator.Name, op.image, removed, removed)
	default:
		f.Title = fmt.Sprintf("Kafka %s/%s is still on ZooKeeper; Strimzi %s and later will not manage it", ref.Namespace, ref.Name, removed)
		f.Message = fmt.Sprintf("Kafka %s/%s %s. No %s image from %s was found among the Deployments, so which release "+
			"runs it is unknown; from %s Strimzi neither runs nor migrates ZooKeeper-based clusters.",
			ref.Namespace, ref.Name, how, facts.Operator.Name, strings.Join(facts.Operator.Images, ", "), removed)
	}
	f.Evidence = ev
	f.AddEvidence(finding.Quote(ref, fields...))
	if op != nil {
		dref := check.Ref("apps/v1", "Deployment", op.deploy)
		f.Objects = append(f.Objects, dref)
		f.AddEvidence(finding.Quote(dref, finding.Value(check.ContainerField("Deployment", "", op.container, "image"), op.image)))
	}
	return f
}
