package jobs

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// API defaults of batch/v1 CronJobSpec (k8s.io/api batch/v1 types.go,
// https://github.com/kubernetes/api/blob/master/batch/v1/types.go): the
// controller keeps this many finished Jobs of each outcome.
const (
	defaultSuccessfulHistory = 3
	defaultFailedHistory     = 1
)

// Policy, not fact. A schedule that fires at most this far apart leaves
// little room for a slow run before the next starts (the research's
// ten-minute line, a heuristic); pileUpSlack Jobs beyond the history
// limits allow for Jobs still running or just finished before cleanup.
const (
	shortSchedule = 10 * time.Minute
	pileUpSlack   = 2
)

// Rules of cronjob-pileup.
const (
	ruleOverlap = "overlap-allowed"
	rulePileUp  = "observed-pileup"
	ruleRetry   = "unbounded-retries"
)

// cronJobPileupCheck finds CronJobs set up to pile up Jobs, and those
// that already have.
func cronJobPileupCheck() check.Check {
	return check.Check{
		ID:       "cronjob-pileup",
		Title:    "CronJobs that pile up Jobs",
		Severity: finding.High,
		Description: "CronJobs that are not suspended, with concurrencyPolicy Allow (the default), a schedule that fires " +
			"ten minutes apart or closer (a heuristic line) and neither startingDeadlineSeconds nor the Job " +
			"template's activeDeadlineSeconds: a run that hangs (a webhook refusing its pods, a dependency down) " +
			"does not stop the next, and Jobs and pods snowball (medium). Observed pile-ups are high: a CronJob " +
			"owning more Jobs than its successful and failed history limits (API defaults 3 and 1) plus two, or " +
			"with more than one active Job. The schedule is read from its minute and hour fields, the @ " +
			"descriptors and @every; an unreadable schedule is reported as not judged. The check cannot see how " +
			"long runs take or whether overlapping runs are meant (idempotent fan-out): the first rule is a " +
			"configuration warning, only the second shows harm. Third rule: a Job that has failed pods and is " +
			"still running new ones, with no activeDeadlineSeconds and containers without a memory limit, is " +
			"being retried with nothing bounding what each retry takes from the node it lands on (medium).",
		Reads: []check.Input{{Resource: snapshot.CronJobs}, {Resource: snapshot.Jobs}},
		Rules: []check.Rule{
			{ID: ruleOverlap, Summary: "Frequent CronJobs allowed to overlap without any deadline",
				Needs: []snapshot.Resource{snapshot.CronJobs}},
			{ID: rulePileUp, Summary: "CronJobs owning more Jobs than their history limits, or more than one active Job",
				Needs: []snapshot.Resource{snapshot.CronJobs, snapshot.Jobs}},
			{ID: ruleRetry, Summary: "Jobs retrying failed pods with no deadline and no memory limit",
				Needs: []snapshot.Resource{snapshot.Jobs}},
		},
		Cases: []string{"cronjob-snowball-webhook-gke-2020", "universe-job-retries-kill-every-node-2017"},
		Run:   runCronJobPileup,
	}
}

func runCronJobPileup(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	if len(s.CronJobs) == 0 && len(s.Jobs) == 0 && !ctx.Present(snapshot.CronJobs) && !ctx.Present(snapshot.Jobs) {
		return nil, check.NotEvaluated("the input has no CronJobs or Jobs")
	}
	// Jobs per owning CronJob, and how many of them are running.
	byCron := map[snapshot.OwnerID]*jobCount{}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		for _, o := range j.OwnerReferences {
			if o.Controller == nil || !*o.Controller || o.Kind != "CronJob" {
				continue
			}
			id := snapshot.RefID(j.Namespace, o)
			if byCron[id] == nil {
				byCron[id] = &jobCount{}
			}
			byCron[id].total++
			if j.Status.Active > 0 {
				byCron[id].active++
			}
		}
	}
	var out []finding.Finding
	for i := range s.Jobs {
		if f, ok := retryFinding(&s.Jobs[i]); ok {
			out = append(out, f)
		}
	}
	for i := range s.CronJobs {
		c := &s.CronJobs[i]
		ref := check.Ref("batch/v1", "CronJob", c)
		if f, ok := pileUpFinding(ctx, c, ref, byCron[snapshot.IDOf("CronJob", &c.ObjectMeta)]); ok {
			out = append(out, f)
			continue // the observed harm says more than the configuration
		}
		if f, ok := overlapFinding(ctx, c, ref); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// jobCount is how many Jobs a CronJob owns, and how many are running.
type jobCount struct{ total, active int }

func limitOr(p *int32, def int) int {
	if p == nil {
		return def
	}
	return int(*p)
}

func pileUpFinding(ctx *check.Context, c *batchv1.CronJob, ref finding.ObjectRef, o *jobCount) (finding.Finding, bool) {
	keep := limitOr(c.Spec.SuccessfulJobsHistoryLimit, defaultSuccessfulHistory) + limitOr(c.Spec.FailedJobsHistoryLimit, defaultFailedHistory)
	total, active := 0, len(c.Status.Active)
	if o != nil {
		total = o.total
		if o.active > active {
			active = o.active
		}
	}
	if total == 0 && !ctx.CompleteIn(snapshot.Jobs, c.Namespace) && active <= 1 {
		return finding.Finding{}, false
	}
	var ev []string
	switch {
	case total > keep+pileUpSlack:
		ev = append(ev, fmt.Sprintf("owns %d Jobs; its history limits keep %d finished Jobs (successful %d, failed %d)",
			total, keep, limitOr(c.Spec.SuccessfulJobsHistoryLimit, defaultSuccessfulHistory), limitOr(c.Spec.FailedJobsHistoryLimit, defaultFailedHistory)))
	case active > 1:
	default:
		return finding.Finding{}, false
	}
	if active > 1 {
		ev = append(ev, fmt.Sprintf("%d Jobs active at once (status.active and Jobs with running pods)", active))
	}
	policy := string(c.Spec.ConcurrencyPolicy)
	if policy == "" {
		policy = "Allow (default)"
	}
	ev = append(ev, fmt.Sprintf("schedule %q, concurrencyPolicy %s", c.Spec.Schedule, policy))
	f := finding.Finding{
		Check:    "cronjob-pileup",
		Severity: finding.High,
		Title:    fmt.Sprintf("CronJob %s/%s is piling up Jobs", c.Namespace, c.Name),
		Message: "The CronJob has more Jobs than its history limits keep, or several running at once: its runs are not " +
			"finishing while new ones start. Each Job adds pods, API objects and load, and the pile grows until " +
			"the cause (a refused pod, a stuck dependency) is fixed.",
		Objects:  []finding.ObjectRef{ref},
		Evidence: ev,
		Remediation: "Find why runs do not finish (the Jobs' pods and events); set concurrencyPolicy Forbid or Replace, " +
			"startingDeadlineSeconds and the Job template's activeDeadlineSeconds, then delete the stale Jobs.",
		Cases: []string{"cronjob-snowball-webhook-gke-2020", "universe-job-retries-kill-every-node-2017"},
	}
	f.AddEvidence(cronJobQuote(ref, c))
	return f, true
}

func overlapFinding(ctx *check.Context, c *batchv1.CronJob, ref finding.ObjectRef) (finding.Finding, bool) {
	if c.Spec.Suspend != nil && *c.Spec.Suspend {
		return finding.Finding{}, false
	}
	if c.Spec.ConcurrencyPolicy != "" && c.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent {
		return finding.Finding{}, false
	}
	if c.Spec.StartingDeadlineSeconds != nil || c.Spec.JobTemplate.Spec.ActiveDeadlineSeconds != nil {
		return finding.Finding{}, false
	}
	every, err := minInterval(c.Spec.Schedule)
	if err != nil {
		ctx.Incomplete(ruleOverlap, "CronJob %s/%s: %v", c.Namespace, c.Name, err)
		return finding.Finding{}, false
	}
	if every > shortSchedule {
		return finding.Finding{}, false
	}
	f := finding.Finding{
		Check:    "cronjob-pileup",
		Severity: finding.Medium,
		Title:    fmt.Sprintf("CronJob %s/%s runs every %s and lets runs overlap without a deadline", c.Namespace, c.Name, every),
		Message: "concurrencyPolicy Allow starts each run whether or not the last has finished, and without " +
			"startingDeadlineSeconds or activeDeadlineSeconds nothing bounds a run that hangs: when pods cannot " +
			"start or finish, Jobs and pods accumulate at the schedule's pace.",
		Objects: []finding.ObjectRef{ref},
		Evidence: []string{fmt.Sprintf("schedule %q (runs as close as %s apart); concurrencyPolicy %s; no startingDeadlineSeconds; no jobTemplate activeDeadlineSeconds",
			c.Spec.Schedule, every, orDefault(string(c.Spec.ConcurrencyPolicy), "Allow (default)"))},
		Remediation: "Set concurrencyPolicy Forbid (or Replace) unless overlapping runs are intended, and bound runs with " +
			"the Job template's activeDeadlineSeconds.",
		Cases: []string{"cronjob-snowball-webhook-gke-2020"},
	}
	f.AddEvidence(finding.Quote(ref, finding.Value("spec.schedule", c.Spec.Schedule),
		finding.Value("spec.concurrencyPolicy", string(c.Spec.ConcurrencyPolicy)), finding.Absent("spec.startingDeadlineSeconds"),
		finding.Absent("spec.jobTemplate.spec.activeDeadlineSeconds")))
	return f, true
}

// cronJobQuote is a CronJob's schedule and concurrency policy as written.
func cronJobQuote(ref finding.ObjectRef, c *batchv1.CronJob) finding.EvidenceItem {
	return finding.Quote(ref, finding.Value("spec.schedule", c.Spec.Schedule),
		finding.Value("spec.concurrencyPolicy", string(c.Spec.ConcurrencyPolicy)))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// retryFinding reports a Job retrying failed pods with nothing bounding the
// retries in time or each retry's memory.
func retryFinding(j *batchv1.Job) (finding.Finding, bool) {
	if j.Status.Failed == 0 || j.Status.Active == 0 || j.Spec.ActiveDeadlineSeconds != nil {
		return finding.Finding{}, false
	}
	var unlimited []string
	for _, c := range j.Spec.Template.Spec.Containers {
		if _, ok := c.Resources.Limits["memory"]; !ok {
			unlimited = append(unlimited, c.Name)
		}
	}
	if len(unlimited) == 0 {
		return finding.Finding{}, false
	}
	backoff := "unset (API default 6)"
	if j.Spec.BackoffLimit != nil {
		backoff = fmt.Sprint(*j.Spec.BackoffLimit)
	}
	jref := check.Ref("batch/v1", "Job", j)
	f := finding.Finding{
		Check:    "cronjob-pileup",
		Severity: finding.Medium,
		Title:    fmt.Sprintf("Job %s/%s is retrying failed pods with no deadline and no memory limit", j.Namespace, j.Name),
		Message: "The Job has failed pods and is running new ones. Without a memory limit each retry can take a node's " +
			"memory again, and without activeDeadlineSeconds nothing stops the retries before backoffLimit: a " +
			"resource-hungry Job can take down node after node.",
		Objects: []finding.ObjectRef{check.Ref("batch/v1", "Job", j)},
		Evidence: []string{fmt.Sprintf("status: %d failed, %d active; backoffLimit %s; no activeDeadlineSeconds; containers without a memory limit: %s",
			j.Status.Failed, j.Status.Active, backoff, check.ListText(unlimited, 10))},
		Remediation: "Give the Job's containers memory limits, set activeDeadlineSeconds and a small backoffLimit, and find why its pods fail.",
		Cases:       []string{"universe-job-retries-kill-every-node-2017"},
	}
	f.AddEvidence(finding.Quote(jref, finding.Value("status.failed", j.Status.Failed), finding.Value("status.active", j.Status.Active),
		finding.Absent("spec.activeDeadlineSeconds")))
	return f, true
}
