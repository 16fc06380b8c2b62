// The vocabularies of enum-like columns, declared once. Where a column holds exactly one of the contract's enums,
// its type is the contract's (generated/api.d.ts), so a mapper hands the stored value to the wire without a cast
// and a value the contract does not know fails to compile where it is written. A vocabulary the contract does
// not have (an internal state) is declared next to its table instead.
import type { components } from '../../../generated/api.d.ts';

type S = components['schemas'];

export type Channel = S['Channel'];
export type MessageType = S['MessageType'];

export type Direction = S['Direction'];
export type MessageStatus = S['MessageStatus'];
/** Includes null (the contract's enum does): no fallback. */
export type FallbackReason = S['FallbackReason'];
/** Includes null (the contract's enum does): not a text message. */
export type MessageEncoding = S['MessageEncoding'];
export type ConversationStatus = S['Conversation']['status'];
export type ConversationHandledBy = S['Conversation']['handledBy'];
export type ConversationSourceType = S['ConversationSourceType'];

export type SenderIdType = S['SenderIdType'];
export type SenderIdStatus = S['SenderIdStatus'];
export type SenderIdProvider = S['SenderIdProvider'];
export type RcsAgentPhase = S['SenderIdRcsAgentPhase'];
export type SenderIdInventoryType = S['SenderIdInventoryType'];
export type SenderIdNumberStatus = S['SenderIdNumberStatus'];
export type SenderIdNumberSource = S['SenderIdNumber']['source'];
export type SenderIdNumberCapability = S['SenderIdNumberCapability'];
export type SenderProtocolType = S['SenderProtocolType'];
export type SenderProtocolStatus = S['SenderProtocolStatus'];
export type RcsTestDeviceStatus = S['RcsTestDevice']['status'];

export type SenderSubmissionKind = S['SenderSubmissionKind'];
export type SenderSubmissionStatus = S['SenderSubmissionStatus'];
export type BrandRegistrationStatus = S['SenderBrandRegistrationStatus'];
export type BrandEntityType = S['SenderBrandEntityType'];
export type BrandVertical = S['SenderBrandVertical'];
export type CampaignRegistrationStatus = S['SenderCampaignRegistrationStatus'];
export type CampaignUseCase = S['SenderCampaignUseCase'];
export type ProgramStatus = S['ProgramStatus'];
export type ProgramSenderRole = S['ProgramSenderRole'];

export type BotStatus = S['BotStatus'];
export type BotTesterInviteStatus = S['BotTesterInviteStatus'];
export type BlastStatus = S['BlastStatus'];
export type BlastContentSource = S['BlastContentSource'];
export type WebhookEventName = S['WebhookEventName'];
export type AcquisitionCampaignType = S['AcquisitionCampaignType'];
export type AcquisitionCampaignStatus = S['AcquisitionCampaignStatus'];
