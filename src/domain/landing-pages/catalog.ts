// The platform's landing page template catalogue (the same for every organization, in code; listed sorted by
// name) and the built-in default used when a page is created without `templateId`. Creating a page copies a
// template's defaults into it, so later catalogue changes never touch existing pages.
import type { StoredConsent, StoredFormField, StoredTheme } from '../../db/tables/landing-pages.ts';

export type TemplateDefaults = {
  title: string;
  headline: string;
  body: string | null;
  formFields: StoredFormField[];
  consent: StoredConsent;
  submitLabel: string;
  successMessage: string;
  theme: StoredTheme;
};

export type LandingPageTemplate = {
  id: string;
  /** File name of the preview image (served by the public route, src/http/landing-pages.ts). */
  previewName: string;
  name: string;
  description: string;
  category: 'opt_in' | 'lead_capture' | 'promotion' | 'event' | 'feedback';
  defaults: TemplateDefaults;
};

const STANDARD_CONSENT_TEXT =
  'I agree to receive recurring marketing texts at the number provided. Consent is not a condition of purchase. Msg & data rates may apply. Reply STOP to opt out, HELP for help.';

const field = (key: string, label: string, type: StoredFormField['type'], more: Partial<StoredFormField> = {}): StoredFormField => ({
  key,
  label,
  type,
  required: type === 'phone',
  options: null,
  attributeKey: null,
  ...more,
});
const phone = field('phone', 'Mobile number', 'phone', { required: true });
const marketing: StoredConsent = { text: STANDARD_CONSENT_TEXT, required: true, messageType: 'MARKETING' };
const blue: StoredTheme = { primaryColor: '#1A73E8', backgroundColor: '#FFFFFF' };

/** Without `templateId`: one required phone field, the standard MARKETING consent, "Sign up". */
export const DEFAULT_PAGE: TemplateDefaults = {
  title: 'Sign up for texts',
  headline: 'Sign up for texts',
  body: null,
  formFields: [phone],
  consent: marketing,
  submitLabel: 'Sign up',
  successMessage: 'Thanks! You are signed up.',
  theme: blue,
};

const templates: LandingPageTemplate[] = [
  {
    id: '0b6f3c2a-8e1d-4a57-9c3e-5f2d7a1b4c60',
    previewName: 'sms-opt-in',
    name: 'SMS opt-in',
    description: 'Collects a phone number and marketing consent, with an optional first name.',
    category: 'opt_in',
    defaults: {
      title: 'Join our text club',
      headline: 'Get 10% off your next order',
      body: 'Sign up for texts and be the first to hear about new drops and offers.',
      formFields: [phone, field('first_name', 'First name', 'text', { attributeKey: 'first_name' })],
      consent: marketing,
      submitLabel: 'Sign up',
      successMessage: "You're in! Check your phone for a welcome text.",
      theme: blue,
    },
  },
  {
    id: '3d1e5b7a-2c4f-4e8a-9b6d-1a2b3c4d5e61',
    previewName: 'lead-capture',
    name: 'Lead capture',
    description: 'Name, email and phone for a sales follow-up, with marketing consent.',
    category: 'lead_capture',
    defaults: {
      title: 'Talk to our team',
      headline: 'Tell us how to reach you',
      body: 'Leave your details and someone from our team will text you shortly.',
      formFields: [
        field('name', 'Full name', 'text', { required: true }),
        field('email', 'Email', 'email', { attributeKey: 'email' }),
        phone,
      ],
      consent: marketing,
      submitLabel: 'Contact me',
      successMessage: 'Thanks! We will be in touch soon.',
      theme: { primaryColor: '#0B8043', backgroundColor: '#FFFFFF' },
    },
  },
  {
    id: '5a7c9e1b-3d5f-4a7b-8c9d-2e3f4a5b6c72',
    previewName: 'promotion',
    name: 'Promotion',
    description: 'A discount offer: the visitor signs up for texts to receive the code.',
    category: 'promotion',
    defaults: {
      title: 'Your discount code',
      headline: 'Get 15% off today',
      body: 'Enter your number and we will text you your code.',
      formFields: [phone],
      consent: marketing,
      submitLabel: 'Text me the code',
      successMessage: 'Your code is on its way by text.',
      theme: { primaryColor: '#D93025', backgroundColor: '#FFF8F6' },
    },
  },
  {
    id: '7e9a1c3d-5b7f-4c9e-8a1b-3c4d5e6f7a83',
    previewName: 'event-rsvp',
    name: 'Event RSVP',
    description: 'RSVP with name, phone and party size; reminders by text.',
    category: 'event',
    defaults: {
      title: 'RSVP',
      headline: 'Save your spot',
      body: 'Reserve your place and get a reminder by text the day before.',
      formFields: [
        field('name', 'Name', 'text', { required: true }),
        phone,
        field('guests', 'Number of guests', 'select', { required: true, options: ['1', '2', '3', '4'], attributeKey: 'guests' }),
      ],
      consent: {
        text: 'I agree to receive text reminders about this event at the number provided. Msg & data rates may apply. Reply STOP to opt out.',
        required: true,
        messageType: 'TRANSACTIONAL',
      },
      submitLabel: 'RSVP',
      successMessage: 'You are on the list! We will text you a reminder.',
      theme: { primaryColor: '#8430CE', backgroundColor: '#FFFFFF' },
    },
  },
  {
    id: '9c1e3a5b-7d9f-4e1a-8b3c-4d5e6f7a8b94',
    previewName: 'feedback',
    name: 'Feedback',
    description: 'A short survey: rating and comments, with an optional opt-in to texts.',
    category: 'feedback',
    defaults: {
      title: 'How did we do?',
      headline: 'Tell us about your visit',
      body: null,
      formFields: [
        phone,
        field('rating', 'Rating (1–5)', 'select', { required: true, options: ['1', '2', '3', '4', '5'] }),
        field('comments', 'Comments', 'textarea'),
      ],
      consent: { text: STANDARD_CONSENT_TEXT, required: false, messageType: 'MARKETING' },
      submitLabel: 'Send feedback',
      successMessage: 'Thank you for your feedback!',
      theme: blue,
    },
  },
];

/** The whole catalogue, sorted by name. */
export const CATALOG: readonly LandingPageTemplate[] = [...templates].sort((a, b) => a.name.localeCompare(b.name, 'en'));

export const findTemplate = (id: string): LandingPageTemplate | undefined => CATALOG.find((t) => t.id === id);
export const findTemplateByPreview = (name: string): LandingPageTemplate | undefined => CATALOG.find((t) => t.previewName === name);
