// Every background queue's name, in one place. The names are stored with each job in PostgreSQL, so they are
// stable identifiers: renaming one would strand the jobs already queued under the old name.
export const QUEUES = {
  contactImport: 'contacts.import',
  contactBulkTag: 'contacts.bulk-tag',
  segmentPurge: 'contacts.segment-purge',
  messageDispatch: 'message.dispatch',
  messageRcsExpiry: 'message.rcs-expiry',
  simulatorCallback: 'simulator.callback',
  webhookDelivery: 'webhook-delivery',
  webhookPurge: 'webhooks.purge',
  idempotencyPurge: 'idempotency.purge',
  submissionReview: 'submissions.review',
  assetProcess: 'assets.process',
  blastStart: 'blasts.start',
  blastSendBatch: 'blasts.send-batch',
  blastAdvance: 'blasts.advance',
  analyticsScheduledReports: 'analytics.scheduled-reports',
  analyticsRollupCompact: 'analytics.rollup-compact',
  analyticsExport: 'analytics.export',
  acquisitionPendingPurge: 'acquisition.pending-purge',
  billingMonthlyFees: 'billing.monthly-fees',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
