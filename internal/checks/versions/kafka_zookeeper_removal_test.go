package versions

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestKafkaZooKeeperGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, kafkaZooKeeperRemovalCheck(), checktest.Complete(checktest.Load(t, "kafka-zookeeper-removal/gap.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	if len(fs) != 1 || fs[0].Severity != finding.Medium || fs[0].Cases[0] != caseStrimziZK {
		t.Fatalf("want one medium finding citing %s, got %+v", caseStrimziZK, fs)
	}
	if !checktest.HasObject(fs, "Kafka", "kafka", "maskafka") || !checktest.HasObject(fs, "Deployment", "kafka", "strimzi-cluster-operator") {
		t.Errorf("objects %+v", fs[0].Objects)
	}
	checktest.EvidenceTrue(t, fs, "kafka-zookeeper-removal/gap.yaml")
}

func TestKafkaZooKeeperUnmanagedIsHigh(t *testing.T) {
	fs, _, _ := checktest.Run(t, kafkaZooKeeperRemovalCheck(), checktest.Complete(checktest.Load(t, "kafka-zookeeper-removal/unmanaged.yaml")))
	if len(fs) != 1 || fs[0].Severity != finding.High {
		t.Fatalf("want one high finding under Strimzi 0.46, got %+v", fs)
	}
}

// KRaft, PreKRaft (ZooKeeper no longer holds the metadata) and a fresh
// KRaft resource: nothing to say.
func TestKafkaZooKeeperKRaftPasses(t *testing.T) {
	checktest.Quiet(t, kafkaZooKeeperRemovalCheck(), checktest.Complete(checktest.Load(t, "kafka-zookeeper-removal/ok.yaml")))
}

// Without a status, the declared ensemble decides; without an operator
// the finding stays medium and, from files, says the release is unknown.
func TestKafkaZooKeeperNoStatusNoOperator(t *testing.T) {
	fs, ctx, _ := checktest.Run(t, kafkaZooKeeperRemovalCheck(), checktest.Load(t, "kafka-zookeeper-removal/no-status.yaml"))
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !checktest.HasObject(fs, "Kafka", "streams", "legacy") {
		t.Fatalf("want one medium finding for streams/legacy, got %+v", fs)
	}
	if _, noted := ctx.Notes()[ruleZooKeeperKafka]; !noted {
		t.Errorf("no note for the unknown operator release: %v", ctx.Notes())
	}
}

// No Kafka resources read: the rule did not run.
func TestKafkaZooKeeperSkippedWithoutKafkas(t *testing.T) {
	_, ctx, _ := checktest.Run(t, kafkaZooKeeperRemovalCheck(), checktest.Load(t, "addon-end-of-life/gap.yaml"))
	if n, noted := ctx.Notes()[ruleZooKeeperKafka]; !noted || !n.Skipped {
		t.Errorf("want a skip note, got %v", ctx.Notes())
	}
}
