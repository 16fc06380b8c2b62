// The Common section's metrics (getMetrics): this process's provider dispatch state (src/providers/guard.ts) in the
// Prometheus text exposition format (version 0.0.4), for a scraper. The same figures as /health's `providers`, plus
// the half-open count, as gauges and counters labelled by provider slot. Like /health it carries no organization
// data and is this instance's own view (each instance is scraped on its own).
import type { AppContext } from '../app-context.ts';

const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;

type Family = { name: string; type: 'gauge' | 'counter'; help: string; samples: Array<{ labels: Record<string, string>; value: number }> };

/** Label values are provider slot names and states: no quote, backslash or newline to escape. */
const sample = (name: string, labels: Record<string, string>, value: number) =>
  `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}} ${value}`;

export function renderMetrics(app: Pick<AppContext, 'providers'>, now = new Date()): string {
  const report = app.providers.guard.report(now);
  const families: Family[] = [
    {
      name: 'msa_provider_circuit_state',
      type: 'gauge',
      help: "Provider circuit breaker state: 1 for the slot's current state, 0 for the others.",
      samples: report.flatMap((p) =>
        CIRCUIT_STATES.map((state) => ({ labels: { provider: p.name, state }, value: p.circuit === state ? 1 : 0 })),
      ),
    },
    {
      name: 'msa_provider_consecutive_failures',
      type: 'gauge',
      help: 'Provider outages (5xx, timeouts, no answer) in a row; reset by a successful call.',
      samples: report.map((p) => ({ labels: { provider: p.name }, value: p.consecutiveFailures })),
    },
    {
      name: 'msa_provider_credentials_refused',
      type: 'gauge',
      help: "1 while the provider's last answer to a send refused this service's credentials (401/403), else 0.",
      samples: report.map((p) => ({ labels: { provider: p.name }, value: p.credentialsRefused ? 1 : 0 })),
    },
    {
      name: 'msa_provider_wait_seconds',
      type: 'gauge',
      help: "Seconds dispatch to the provider still waits (an open circuit's next trial, or a 429's Retry-After); 0 when it does not.",
      samples: report.map((p) => ({
        labels: { provider: p.name },
        value: p.waitUntil ? Math.max(0, (p.waitUntil.getTime() - now.getTime()) / 1000) : 0,
      })),
    },
    {
      name: 'msa_provider_circuit_openings_total',
      type: 'counter',
      help: 'Times the provider circuit opened since the instance started.',
      samples: report.map((p) => ({ labels: { provider: p.name }, value: p.circuitOpenings })),
    },
    {
      name: 'msa_provider_circuit_half_opens_total',
      type: 'counter',
      help: "Times an open provider circuit's wait ended and a trial call was let through, since the instance started.",
      samples: report.map((p) => ({ labels: { provider: p.name }, value: p.circuitHalfOpens })),
    },
    {
      name: 'msa_provider_rate_limited_total',
      type: 'counter',
      help: 'Provider calls answered 429 since the instance started.',
      samples: report.map((p) => ({ labels: { provider: p.name }, value: p.rateLimited })),
    },
  ];
  return (
    families
      .flatMap((f) => [
        `# HELP ${f.name} ${f.help}`,
        `# TYPE ${f.name} ${f.type}`,
        ...f.samples.map((s) => sample(f.name, s.labels, s.value)),
      ])
      .join('\n') + '\n'
  );
}
