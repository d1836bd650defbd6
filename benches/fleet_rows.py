"""The monitor's JSON rows against the simulated fleet's known rates, for
benches/monitor_fleet.sh (--federate) and benches/monitor_tsdb.sh (--prometheus).

Usage: python3 benches/fleet_rows.py ROWS_FILE KNOWN SERVERS USER SYS RSS_KB WALL INTERVAL
           (--pages-before N | --rows-before N)
Prints the run (rows, CPU as a share of one core, peak memory), the last row's total
against the known rate, and, for the rows checked (from the Nth page on, or after the
first N rows), how many have the total's and every instance's window figure, with the
worst errors. Instance i runs 0.4 x (1 + i mod 4) of the template's load
(examples/vllm_monitor/src/fleet.rs).
"""
import json
import sys


def window(row):
    return (row.get("generation_tokens_per_s") or {}).get("window")


def instance_errors(row, loads, per_load):
    """Each instance's relative error, or None if one has no window figure."""
    errors = []
    for g in row.get("groups") or []:
        rate = window(g)
        if rate is None:
            return None
        i = int(str(g["instance"]).split("-")[1].split(":")[0])
        errors.append(abs(rate - loads[i] * per_load) / (loads[i] * per_load))
    return errors


def checked_rows(rows, how, n):
    if how == "--rows-before":
        return rows[n:], f"after the first {n} rows"
    pages, late = set(), []
    for row in rows:
        at = row["urls"][0].get("at_ms")
        if at is not None:
            pages.add(at)
        if len(pages) >= n:
            late.append(row)
    return late, f"from page {n} on"


def main():
    path, known, servers, user, sys_, rss_kb, wall, interval, how, before = sys.argv[1:]
    known, n = float(known), int(servers)
    rows = [json.loads(line) for line in open(path) if '"urls"' in line]
    cpu = float(user) + float(sys_)
    print(f"servers {n}: {len(rows)} rows in {float(wall):.1f} s (interval {interval}), "
          f"CPU {cpu:.1f} s = {100 * cpu / float(wall):.1f}% of one core, "
          f"max RSS {int(rss_kb) / 1024:.0f} MB")
    last = next((r for r in reversed(rows) if window(r) is not None), None)
    if last is None:
        print("  no row with a generation rate")
        return
    got = window(last)
    skipped = sum(u.get("skipped_pages", 0) for u in last["urls"])
    per = [window(g) for g in last.get("groups") or []]
    print(f"  generation tok/s: {got:.1f}, known {known:.1f} ({100 * (got - known) / known:+.3f}%); "
          f"{len(per)} instance rows (sum {sum(p for p in per if p is not None):.1f}); "
          f"{skipped} page(s) skipped")
    loads = [0.4 * (1 + i % 4) for i in range(n)]
    per_load = known / sum(loads)
    checked, which = checked_rows(rows, how, int(before))
    total_ok, full, worst_total, worst, shortened = 0, 0, 0.0, 0.0, {}
    for row in checked:
        if window(row) is not None:
            total_ok += 1
            worst_total = max(worst_total, abs(window(row) - known) / known)
        errors = instance_errors(row, loads, per_load)
        if errors is not None and len(errors) == n:
            full += 1
            worst = max([worst] + errors)
        why = row.get("window_shortened")
        if why:
            shortened[why] = shortened.get(why, 0) + 1
    print(f"  {which}: {total_ok} of {len(checked)} rows with the total's window figure "
          f"(worst error {100 * worst_total:.3f}%), {full} with all {n} instances' "
          f"(worst per-instance error {100 * worst:.3f}%); shortened: {shortened or 'none'}")


main()
