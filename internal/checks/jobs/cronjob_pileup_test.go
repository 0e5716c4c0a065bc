package jobs

import (
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestCronJobPileupGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, cronJobPileupCheck(), checktest.Load(t, "gap.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	sev := map[string]finding.Severity{}
	for _, f := range fs {
		sev[f.Objects[0].Kind+"/"+f.Objects[0].Name] = f.Severity
	}
	want := map[string]finding.Severity{"CronJob/sync": finding.Medium, "CronJob/report": finding.High, "Job/reindex": finding.Medium}
	if len(fs) != len(want) {
		t.Errorf("%d findings, want %d: %+v", len(fs), len(want), fs)
	}
	for k, v := range want {
		if got, ok := sev[k]; !ok || got != v {
			t.Errorf("%s: %v (found %v), want %v", k, got, ok, v)
		}
	}
}

func TestCronJobPileupHealthyPasses(t *testing.T) {
	checktest.Quiet(t, cronJobPileupCheck(), checktest.Complete(checktest.Load(t, "healthy.yaml")))
}

func TestCronJobPileupBadSchedule(t *testing.T) {
	s := checktest.Load(t, "gap.yaml")
	for i := range s.CronJobs {
		if s.CronJobs[i].Name == "sync" {
			s.CronJobs[i].Spec.Schedule = "every five minutes"
		}
	}
	fs, ctx, _ := checktest.Run(t, cronJobPileupCheck(), s)
	if checktest.HasObject(fs, "CronJob", "shop", "sync") {
		t.Error("judged an unreadable schedule")
	}
	if _, ok := ctx.Notes()[ruleOverlap]; !ok {
		t.Error("an unreadable schedule left the rule complete")
	}
}

func TestMinInterval(t *testing.T) {
	for sched, want := range map[string]time.Duration{
		"*/5 * * * *":                       5 * time.Minute,
		"* * * * *":                         time.Minute,
		"0 * * * *":                         time.Hour,
		"0,30 * * * *":                      30 * time.Minute,
		"55 9-17 * * 1-5":                   time.Hour,
		"0 3 * * *":                         24 * time.Hour,
		"0 */6 * * *":                       6 * time.Hour,
		"@hourly":                           time.Hour,
		"@every 2m":                         2 * time.Minute,
		"CRON_TZ=Europe/Paris */10 * * * *": 10 * time.Minute,
		"50,5 * * * *":                      15 * time.Minute,
	} {
		got, err := minInterval(sched)
		if err != nil || got != want {
			t.Errorf("minInterval(%q) = %v, %v; want %v", sched, got, err, want)
		}
	}
	for _, bad := range []string{"", "* * * *", "61 * * * *", "*/0 * * * *", "a * * * *"} {
		if _, err := minInterval(bad); err == nil {
			t.Errorf("minInterval(%q) accepted", bad)
		}
	}
}
