// Per-channel rendering, billing units and warnings (pure; no database).
import { describe, expect, it } from 'vitest';
import { channelAccepts, fallbackChannelFor, render, type SendContent } from '../src/domain/messaging/render.ts';

const card: SendContent = {
  type: 'card',
  title: 'Weekend sale',
  text: 'Everything 20% off until Sunday – use code WEEKEND20.',
  mediaUrl: 'https://cdn.example.com/img/weekend-sale.jpg',
  actions: [{ text: 'Shop now', url: 'https://shop.example.com/sale' }],
  replies: [{ text: 'Not interested', postback: 'not_interested' }],
};

describe('render', () => {
  it('keeps a card rich on RCS, billed per message', () => {
    const r = render('RCS', card);
    expect(r).toMatchObject({ title: 'Weekend sale', segments: 1, encoding: null, costUnits: 150, warnings: [] });
    expect(r.actions).toHaveLength(1);
  });

  it('renders a card with media as MMS with action and reply lines', () => {
    expect(fallbackChannelFor(card)).toBe('MMS');
    const r = render('MMS', card);
    expect(r.body).toBe(
      'Weekend sale\nEverything 20% off until Sunday – use code WEEKEND20.\nShop now: https://shop.example.com/sale\nReply 1 for Not interested',
    );
    expect(r).toMatchObject({
      mediaUrl: card.type === 'card' ? card.mediaUrl : null,
      segments: 1,
      encoding: null,
      costUnits: 150,
      actions: [],
      replies: [],
    });
    expect(r.warnings.map((w) => w.code)).toEqual(['ACTIONS_AS_LINKS', 'REPLIES_AS_TEXT']);
  });

  it('bills text per segment on SMS and RCS alike', () => {
    const text: SendContent = { type: 'text', text: 'a'.repeat(200) };
    expect(fallbackChannelFor(text)).toBe('SMS');
    for (const channel of ['SMS', 'RCS'] as const) {
      expect(render(channel, text)).toMatchObject({ segments: 2, encoding: 'GSM7', characters: 200, costUnits: 78 });
    }
    expect(render('SMS', text).warnings.map((w) => w.code)).toEqual(['MULTIPART']);
  });

  it('renders a carousel as one SMS, cards separated by a blank line, media dropped', () => {
    const carousel: SendContent = {
      type: 'carousel',
      cards: [
        { title: 'A', text: 'first', mediaUrl: 'https://cdn.example.com/a.jpg' },
        { title: 'B', text: 'second' },
      ],
    };
    const r = render('SMS', carousel);
    expect(r.body).toBe('A\nfirst\n\nB\nsecond');
    expect(r.warnings.map((w) => w.code)).toContain('MEDIA_DROPPED');
    expect(render('RCS', carousel)).toMatchObject({ segments: 1, costUnits: 150 });
  });

  it('cuts an SMS body at 1600 characters with a warning', () => {
    const long: SendContent = { type: 'text', text: 'x'.repeat(1600), actions: [{ text: 'More', url: 'https://example.com' }] };
    const r = render('SMS', long);
    expect([...(r.body ?? '')]).toHaveLength(1600);
    expect(r.warnings.map((w) => w.code)).toContain('TEXT_TRUNCATED');
  });

  it('limits chat-app buttons', () => {
    const many: SendContent = {
      type: 'text',
      text: 'hi',
      replies: [1, 2, 3, 4].map((n) => ({ text: `Option number ${n} is long`, postback: `o${n}` })),
    };
    const r = render('CHATAPP', many);
    expect(r.replies).toHaveLength(3);
    expect(r.replies.every((x) => x.text.length <= 20)).toBe(true);
    expect(r.warnings.map((w) => w.code)).toEqual(['ACTIONS_TRUNCATED']);
  });

  it('knows which contents SMS and MMS can carry', () => {
    expect(channelAccepts('SMS', { type: 'text', text: 'x' })).toBe(true);
    expect(channelAccepts('SMS', card)).toBe(false);
    expect(channelAccepts('MMS', card)).toBe(true);
    expect(channelAccepts('MMS', { type: 'text', text: 'x' })).toBe(false);
    expect(channelAccepts('RCS', card)).toBe(true);
  });
});
