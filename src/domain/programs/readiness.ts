// A program's readiness, required actions and next action, computed from stored state on each call (no
// cached verdict): the brand and campaign registrations, the active attachments, each attached sender's
// status and enabled protocols. Pure: programs.ts loads the state, this decides.
import type { components } from '../../../generated/api.d.ts';

type S = components['schemas'];
type Check = S['ProgramReadinessCheck'];
export type Action = S['ProgramAction'];

type AttachedSender = {
  senderId: string;
  role: string;
  status: string;
  type: string;
  rcsAgentPhase: string | null;
  enabledProtocols: string[];
};

export type ProgramState = {
  status: string;
  channels: string[];
  brand: { status: string; rejectionReasons: string[] } | null;
  campaign: { status: string; rejectionReasons: string[] } | null;
  /** Active attachments only. */
  attached: AttachedSender[];
  /** The sender the program's registrations belong to (program-level registration actions name it). */
  registrationSenderId: string;
};

export type Evaluation = {
  readiness: S['ProgramReadiness'];
  requiredActions: Action[];
  nextAction: Action | null;
  customerStatus: S['ProgramCustomerStatus'];
  customerStatusMessage: string;
};

const customer = (code: Action['code'], message: string, senderId: string | null): Action => ({
  code,
  owner: 'CUSTOMER',
  message,
  blocking: true,
  senderId,
});
const reviewer = (code: Action['code'], message: string, senderId: string | null): Action => ({
  code,
  owner: 'REVIEWER',
  message,
  blocking: true,
  senderId,
});
const why = (reasons: string[]) => (reasons.length ? `: ${reasons.join(' ')}` : '.');

export function evaluateProgram(p: ProgramState): Evaluation {
  const checks: Check[] = [];
  const actions: Action[] = [];
  const sid = p.registrationSenderId;

  // Brand
  const b = p.brand;
  if (!b) {
    checks.push({ code: 'BRAND_REGISTERED', status: 'FAILED', message: 'No brand is registered.' });
    actions.push(customer('REGISTER_BRAND', 'Register the brand with POST /v1/sender-ids/{id}/brand/register.', sid));
  } else if (b.status === 'REGISTERED') {
    checks.push({ code: 'BRAND_REGISTERED', status: 'PASSED', message: 'The brand is registered.' });
  } else if (b.status === 'PENDING' || b.status === 'IN_REVIEW') {
    checks.push({ code: 'BRAND_REGISTERED', status: 'PENDING', message: 'The brand is being reviewed by the registry.' });
    actions.push(reviewer('WAIT_FOR_BRAND_REVIEW', 'The registry is reviewing the brand.', sid));
  } else if (b.status === 'SUSPENDED') {
    checks.push({ code: 'BRAND_REGISTERED', status: 'FAILED', message: 'The brand is suspended.' });
    actions.push(customer('RESOLVE_SUSPENSION', 'The brand was suspended; contact support to resolve it.', sid));
  } else {
    checks.push({ code: 'BRAND_REGISTERED', status: 'FAILED', message: `The brand was rejected${why(b.rejectionReasons)}` });
    actions.push(customer('FIX_BRAND_REGISTRATION', `Correct the brand and register it again${why(b.rejectionReasons)}`, sid));
  }

  // Campaign
  const c = p.campaign;
  if (!c) {
    checks.push({ code: 'CAMPAIGN_REGISTERED', status: 'FAILED', message: 'No campaign is registered.' });
    actions.push(
      customer(
        'REGISTER_CAMPAIGN',
        'Register a campaign with POST /v1/sender-ids/{id}/campaign/register once the brand is registered.',
        sid,
      ),
    );
  } else if (c.status === 'REGISTERED') {
    checks.push({ code: 'CAMPAIGN_REGISTERED', status: 'PASSED', message: 'The campaign is registered.' });
  } else if (c.status === 'PENDING' || c.status === 'IN_REVIEW') {
    checks.push({ code: 'CAMPAIGN_REGISTERED', status: 'PENDING', message: 'The campaign is being reviewed by the carriers.' });
    actions.push(reviewer('WAIT_FOR_CAMPAIGN_REVIEW', 'The registry and carriers are reviewing the campaign.', sid));
  } else if (c.status === 'SUSPENDED') {
    checks.push({ code: 'CAMPAIGN_REGISTERED', status: 'FAILED', message: 'The campaign is suspended.' });
    actions.push(customer('RESOLVE_SUSPENSION', 'The campaign was suspended; contact support to resolve it.', sid));
  } else if (c.status === 'EXPIRED') {
    checks.push({ code: 'CAMPAIGN_REGISTERED', status: 'FAILED', message: 'The campaign expired.' });
    actions.push(customer('RENEW_CAMPAIGN', 'Register the campaign again.', sid));
  } else {
    checks.push({ code: 'CAMPAIGN_REGISTERED', status: 'FAILED', message: `The campaign was rejected${why(c.rejectionReasons)}` });
    actions.push(customer('FIX_CAMPAIGN_REGISTRATION', `Correct the campaign and register it again${why(c.rejectionReasons)}`, sid));
  }

  // Primary sender
  if (p.attached.some((a) => a.role === 'PRIMARY')) {
    checks.push({ code: 'PRIMARY_SENDER_ATTACHED', status: 'PASSED', message: 'A primary sender is attached.' });
  } else {
    checks.push({ code: 'PRIMARY_SENDER_ATTACHED', status: 'FAILED', message: 'No primary sender is attached.' });
    actions.push(customer('ATTACH_PRIMARY_SENDER', 'Attach a sender ID with role PRIMARY.', null));
  }

  // Senders active (TEST senders never carry production traffic)
  const production = p.attached.filter((a) => a.role !== 'TEST');
  const inactive = production.filter((a) => a.status !== 'ACTIVE');
  if (!inactive.length) {
    checks.push({ code: 'SENDERS_ACTIVE', status: 'PASSED', message: 'All attached senders are active.' });
  } else {
    const waiting = inactive.every((a) => a.status === 'PENDING');
    checks.push({
      code: 'SENDERS_ACTIVE',
      status: waiting ? 'PENDING' : 'FAILED',
      message: waiting ? 'An attached sender is waiting for its registration to complete.' : 'An attached sender is not active.',
    });
    for (const a of inactive) {
      if (a.status === 'PENDING')
        actions.push(reviewer('WAIT_FOR_SENDER_REVIEW', 'The sender becomes active when the campaign is registered.', a.senderId));
      else if (a.status === 'SUSPENDED')
        actions.push(customer('RESOLVE_SUSPENSION', 'The sender is suspended; reactivate it or contact support.', a.senderId));
      else if (a.type === 'RCS_AGENT' && (a.rcsAgentPhase ?? 'TESTING') === 'TESTING')
        actions.push(customer('LAUNCH_RCS_AGENT', 'Launch the RCS agent, then submit it.', a.senderId));
      else if (a.status === 'DRAFT' || a.status === 'REJECTED')
        actions.push(customer('SUBMIT_SENDER', 'Submit the sender for approval.', a.senderId));
      else if (a.status === 'DEACTIVATED')
        actions.push(customer('ATTACH_PRIMARY_SENDER', 'The sender was deleted; detach it and attach another one.', a.senderId));
      else actions.push(customer('ACTIVATE_SENDER', 'Activate the sender.', a.senderId));
    }
  }

  // Protocols
  const incompatible = p.attached.filter((a) => !a.enabledProtocols.some((t) => p.channels.includes(t)));
  if (!incompatible.length) {
    checks.push({ code: 'PROTOCOLS_COMPATIBLE', status: 'PASSED', message: "All attached senders support the program's channels." });
  } else {
    checks.push({
      code: 'PROTOCOLS_COMPATIBLE',
      status: 'FAILED',
      message: `An attached sender has none of ${p.channels.join(', ')} enabled.`,
    });
    for (const a of incompatible)
      actions.push(
        customer(
          'ACTIVATE_SENDER',
          `Enable one of ${p.channels.join(', ')} on the sender (POST /v1/sender-ids/{id}/protocols).`,
          a.senderId,
        ),
      );
  }

  const ready = checks.every((x) => x.status === 'PASSED');
  const requiredActions = actions.filter((a) => a.owner === 'CUSTOMER');
  const nextAction = ready ? null : (requiredActions[0] ?? actions[0] ?? null);
  let customerStatus: S['ProgramCustomerStatus'];
  let customerStatusMessage: string;
  if (p.status === 'ARCHIVED') [customerStatus, customerStatusMessage] = ['ARCHIVED', 'The program is archived.'];
  else if (ready)
    [customerStatus, customerStatusMessage] =
      p.status === 'ACTIVE' ? ['LIVE', 'The program is live.'] : ['READY', 'Every check passed; the program is ready to send.'];
  else if (actions.some((a) => a.code === 'RESOLVE_SUSPENSION'))
    [customerStatus, customerStatusMessage] = ['SUSPENDED', 'The brand, the campaign or a sender is suspended.'];
  else if (
    actions.some((a) => a.code === 'FIX_BRAND_REGISTRATION' || a.code === 'FIX_CAMPAIGN_REGISTRATION' || a.code === 'RENEW_CAMPAIGN')
  ) {
    [customerStatus, customerStatusMessage] = ['ACTION_REQUIRED', `${requiredActions[0]!.message}`];
  } else if (requiredActions.length) [customerStatus, customerStatusMessage] = ['SETUP_REQUIRED', requiredActions[0]!.message];
  else [customerStatus, customerStatusMessage] = ['IN_REVIEW', 'Waiting on the registry and carriers.'];
  return { readiness: { ready, checks }, requiredActions, nextAction, customerStatus, customerStatusMessage };
}
