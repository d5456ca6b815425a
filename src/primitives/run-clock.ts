/**
 * Date and time variables some published evaluators computed when a run started, by fork
 * (docs/compatibility.md#chain-context). A task's benchmark-pack entry names its fork's family
 * (`clock: rjhcjrst`); the values are computed ONCE per evaluation from its start instant (the
 * workflow passes the same instant to every node), so every node of a run sees the same dates, and
 * they are recorded in each node's record. All are computed in UTC; where a fork used the host's
 * local time (mnmtxiwb) saasbench uses UTC (the containers' clock) — the only difference.
 */

type Clock = (now: Date) => Record<string, string>;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** YYYY-MM-DD of a UTC instant */
const ymd = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
/** YYYY-MM-DDTHH:MM:SS of a UTC instant (no fraction) */
const ymdhms = (d: Date) => `${ymd(d)}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
const DAY = 86_400_000;
const plusDays = (d: Date, n: number) => new Date(d.getTime() + n * DAY);
const plusMinutes = (d: Date, n: number) => new Date(d.getTime() + n * 60_000);
/** Monday = 0 … Sunday = 6 (Python's weekday()) */
const weekday = (d: Date) => (d.getUTCDay() + 6) % 7;
const firstOfMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()));

/** The families: the names each fork's evaluator defined, with its formats. */
export const CLOCKS: Record<string, { source: string; clock: Clock }> = {
  // harness.py execute_dag: utcnow(), its run context before the first node
  rjhcjrst: {
    source: 'eval/task_rjhcjrst/check/task_rjhcjrst_e/evaluate/harness.py (execute_dag)',
    clock: (now) => {
      const first = firstOfMonth(now);
      const prevMonthLast = plusDays(first, -1);
      const recentSaturday = plusDays(now, -((weekday(now) - 5 + 7) % 7));
      return {
        first_day_of_current_month: ymd(first),
        first_of_current_month: ymd(first),
        today: ymd(now),
        today_iso: `${ymdhms(now)}+00:00`,
        yesterday_iso: ymd(plusDays(now, -1)),
        tomorrow_iso: ymd(plusDays(now, 1)),
        three_days_ahead_iso: ymd(plusDays(now, 3)),
        four_days_ago_iso: ymd(plusDays(now, -4)),
        previous_month_15th: `${prevMonthLast.getUTCFullYear()}-${pad(prevMonthLast.getUTCMonth() + 1)}-15`,
        current_year: String(now.getUTCFullYear()),
        current_month: pad(now.getUTCMonth() + 1),
        most_recent_monday_iso: ymd(plusDays(now, -weekday(now))),
        recent_saturday_iso: ymd(recentSaturday),
        weekend_recurrence_first_date: ymd(plusDays(recentSaturday, -28)),
        friday_before_recent_saturday: ymd(plusDays(recentSaturday, -1)),
        first_monday_of_current_month: ymd(plusDays(first, (7 - weekday(first)) % 7)),
      };
    },
  },
  // harness.py _inject_test_user_placeholders: datetime.now(timezone.utc) without microseconds
  iyjruvfz: {
    source: 'eval/task_iyjruvfz/check/task_iyjruvfz_e/evaluate/harness.py (_inject_test_user_placeholders)',
    clock: (now) => ({
      NOW: `${ymdhms(now)}Z`,
      NOW_PLUS_30M: `${ymdhms(plusMinutes(now, 30))}Z`,
      NOW_PLUS_2H: `${ymdhms(plusMinutes(now, 120))}Z`,
      NOW_DATE: ymd(now),
      NOW_DATE_PLUS_2D: ymd(plusDays(now, 2)),
    }),
  },
  // primitives.py _resolve: builtins recomputed at each substitution from datetime.now() (local
  // time written with a Z); here once per run, in UTC
  mnmtxiwb: {
    source: 'eval/task_mnmtxiwb/check/task_mnmtxiwb_e/evaluate/primitives.py (_resolve)',
    clock: (now) => ({
      current_timestamp: String(Math.floor(now.getTime() / 1000)),
      current_iso_datetime: `${ymdhms(now)}Z`,
      future_datetime_1y: `${ymdhms(plusDays(now, 365))}Z`,
      future_datetime_1m: `${ymdhms(plusDays(now, 30))}Z`,
      future_date_1y: ymd(plusDays(now, 365)),
      past_datetime: `${ymdhms(plusDays(now, -1))}Z`,
    }),
  },
  // utils.py EvalContext: now (UTC) + 7 days, inside the app's 31-day limit for a Send
  ubsmhopy: {
    source: 'eval/task_ubsmhopy/check/task_ubsmhopy_e/evaluate/utils.py (EvalContext)',
    clock: (now) => ({ deletion_date: `${ymdhms(plusDays(now, 7))}Z` }),
  },
};

export const CLOCK_FAMILIES = Object.keys(CLOCKS) as [string, ...string[]];

/** The variable names a family defines (for the load-time placeholder check). */
export function clockNames(family: string | undefined): string[] {
  return family && CLOCKS[family] ? Object.keys(CLOCKS[family].clock(new Date(0))) : [];
}

/** The family's values at `at` (an ISO instant: the evaluation's start). */
export function clockValues(family: string | undefined, at: string): Record<string, string> {
  if (!family || !CLOCKS[family]) return {};
  const now = new Date(at);
  if (Number.isNaN(now.getTime())) throw new Error(`clock: "${at}" is not an instant`);
  return CLOCKS[family].clock(now);
}
