// sqlgate's figures before the speed work of docs/decisions.md 10.29 (and 10.30), from the
// `npm run bench` run of 2026-11-26T10:30:02Z (docs/benchmarks.md of commit a3ee4ee), on the
// machine named in `machine`: the median CPU per request of the sqlgate process and the ratios of
// medians, by workload and connection count. bench/http.mjs prints them beside the run's own; CPU
// figures compare only on the same kind of machine, ratios travel better.
export const BEFORE = {
  measured: '2026-11-26T10:30:02Z',
  commit: 'a3ee4ee',
  machine: 'Intel(R) Xeon(R) Processor × 2',
  workloads: {
    select1: {
      10: { cpu: 172, fast: 0.5, baseline: 0.96 },
      50: { cpu: 168, fast: 0.6, baseline: 0.96 },
    },
    rows100: {
      10: { cpu: 350, fast: 1.6, baseline: 1.63 },
      50: { cpu: 395, fast: 1.29, baseline: 1.39 },
    },
    reads3: {
      10: { cpu: 532, fast: 0.71, baseline: 0.87 },
      50: { cpu: 710, fast: 0.57, baseline: 0.69 },
    },
    write5: {
      10: { cpu: 702, fast: 0.93, baseline: 1.05 },
      50: { cpu: 727, fast: 0.93, baseline: 1.13 },
    },
    cached: {
      10: { cpu: 120, fast: 1.6, baseline: 1.81 },
      50: { cpu: 110, fast: 1.81, baseline: 2.43 },
    },
  },
};
