// Webhooks section tables (endpoints, events, delivery attempts).
export interface WebhooksTables {}
