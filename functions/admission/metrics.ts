// neoset_admission_requests_total (SPEC §4.8), in the functions' shared registry so /metrics shows
// it beside the process metrics. `webhook` (mutate | validate) is an extra label: without it each
// user write would be counted twice under the same labels.
import { Counter } from 'prom-client';
import { registry } from '../../shared/metrics/registry.ts';

export { registry };

export const admissionRequests = new Counter({
  name: 'neoset_admission_requests_total',
  help: 'AdmissionReviews answered, by webhook, operation (unknown: not an AdmissionReview) and allowed.',
  labelNames: ['webhook', 'operation', 'allowed'] as const,
  registers: [registry],
});
