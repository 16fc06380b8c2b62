// Operations documented in openapi.yaml but not built yet, by section: each answers 501 NOT_IMPLEMENTED.
// Remove an id here when its handler lands in src/handlers/<section>.ts. Start-up fails if an operation has
// neither a handler nor an entry here, or both. `npm run ops:status` lists both.
const pending: Record<string, readonly string[]> = {
  'Common': [
    'createLandingPage',
    'deleteLandingPage',
    'getLandingPage',
    'listLandingPageSubmissions',
    'listLandingPageTemplates',
    'listLandingPages',
    'publishLandingPage',
    'unpublishLandingPage',
    'updateLandingPage',
  ],
  'Programs': [
  ],
  'Blasts': [
    'cancelBlast',
    'createBlast',
    'deleteBlast',
    'estimateBlast',
    'getBlast',
    'getBlastProgress',
    'getBlastStats',
    'launchBlast',
    'listBlasts',
    'scheduleBlast',
    'sendBlast',
    'testBlast',
    'updateBlast',
    'updateBlastAudience',
    'updateBlastContent',
  ],
  'Bots': [
    'addBotTester',
    'createBot',
    'deleteBot',
    'getBot',
    'listBotRevisions',
    'listBotTesters',
    'listBots',
    'publishBot',
    'updateBot',
    'validateBot',
  ],
  'Dictionaries': [
  ],
  'Contacts': [
  ],
  'Compliance': [
  ],
  'Templates': [
    'listChatAppTemplates',
  ],
  'Conversations': [
  ],
  'Analytics': [
    'createAnalyticsReport',
    'deleteAnalyticsReport',
    'downloadAnalyticsExport',
    'exportAnalytics',
    'getAnalyticsBlast',
    'getAnalyticsBot',
    'getAnalyticsBotFunnel',
    'getAnalyticsIntents',
    'getAnalyticsOverview',
    'getAnalyticsProtocols',
    'getAnalyticsSenderId',
    'getAnalyticsSessions',
    'getAnalyticsTop',
    'getAnalyticsTrends',
    'getAnalyticsUsage',
    'listAnalyticsReports',
    'listAnalyticsSenderIds',
    'updateAnalyticsReport',
  ],
  'Webhooks': [
  ],
  'API Keys': [
  ],
  'Events': [
    'createAcquisitionCampaign',
    'deleteAcquisitionCampaign',
    'enrollAcquisitionContact',
    'enrollPublicAcquisitionContact',
    'generateAcquisitionCampaignQr',
    'getAcquisitionCampaign',
    'listAcquisitionCampaigns',
    'triggerEvent',
    'triggerEventBatch',
    'updateAcquisitionCampaign',
  ],
  'Submissions': [
  ],
};

export const notImplementedOperations: readonly string[] = Object.values(pending).flat();
