package jobs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// minInterval is the shortest time between two runs of a cron schedule,
// as the CronJob controller reads it (five fields, the @ descriptors and
// @every; a CRON_TZ= or TZ= prefix changes nothing here). Only the minute
// and hour fields are read: day and month fields make runs rarer, never
// closer, so the result is a lower bound on the gap, which is what the
// check needs.
func minInterval(schedule string) (time.Duration, error) {
	s := strings.TrimSpace(schedule)
	if strings.HasPrefix(s, "CRON_TZ=") || strings.HasPrefix(s, "TZ=") {
		if _, rest, ok := strings.Cut(s, " "); ok {
			s = strings.TrimSpace(rest)
		}
	}
	switch s {
	case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight":
		return 24 * time.Hour, nil
	case "@hourly":
		return time.Hour, nil
	}
	if d, ok := strings.CutPrefix(s, "@every "); ok {
		return time.ParseDuration(strings.TrimSpace(d))
	}
	f := strings.Fields(s)
	if len(f) != 5 {
		return 0, fmt.Errorf("schedule %q: want five fields", schedule)
	}
	minutes, err := cronField(f[0], 0, 59)
	if err != nil {
		return 0, err
	}
	hours, err := cronField(f[1], 0, 23)
	if err != nil {
		return 0, err
	}
	best := 24 * time.Hour
	for i := 1; i < len(minutes); i++ {
		if d := time.Duration(minutes[i]-minutes[i-1]) * time.Minute; d < best {
			best = d
		}
	}
	// Across an hour boundary: the last minute of one hour to the first of
	// the next, when both hours run.
	inHours := map[int]bool{}
	for _, h := range hours {
		inHours[h] = true
	}
	for _, h := range hours {
		if inHours[(h+1)%24] {
			if d := time.Duration(60-minutes[len(minutes)-1]+minutes[0]) * time.Minute; d < best {
				best = d
			}
			break
		}
	}
	if len(minutes) == 1 && len(hours) > 1 {
		for i := 1; i < len(hours); i++ {
			if d := time.Duration(hours[i]-hours[i-1]) * time.Hour; d < best {
				best = d
			}
		}
	}
	return best, nil
}

// cronField expands one cron field (*, */n, a, a-b, a-b/n, a/n, lists)
// into its sorted values.
func cronField(field string, lo, hi int) ([]int, error) {
	set := map[int]bool{}
	for _, item := range strings.Split(field, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("cron field %q: bad step", field)
			}
			step = n
		}
		from, to := lo, hi
		switch {
		case rng == "*" || rng == "?":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			x, err1 := strconv.Atoi(a)
			y, err2 := strconv.Atoi(b)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("cron field %q: bad range", field)
			}
			from, to = x, y
		default:
			x, err := strconv.Atoi(rng)
			if err != nil {
				return nil, fmt.Errorf("cron field %q: not a number", field)
			}
			from = x
			if !hasStep {
				to = x
			}
		}
		if from < lo || to > hi || from > to {
			return nil, fmt.Errorf("cron field %q: out of range", field)
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	out := make([]int, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Ints(out)
	return out, nil
}
