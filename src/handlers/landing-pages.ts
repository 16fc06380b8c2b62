// Common section (the common paths of openapi.yaml), landing pages: see README "Adding an operation". Each handler takes
// the typed input, makes one service call (src/domain/landing-pages/) and maps the result. The published page
// itself is served outside the API by src/http/landing-pages.ts.
import { CATALOG } from '../domain/landing-pages/catalog.ts';
import { toLandingPage, toSubmission, toTemplate } from '../domain/landing-pages/mappers.ts';
import * as pages from '../domain/landing-pages/pages.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated, wholeOrPaged } from '../http/pagination.ts';

export const landingPageHandlers = defineHandlers({
  async listLandingPageTemplates({ query }, { services }) {
    return {
      status: 200,
      body: wholeOrPaged(
        CATALOG.map((t) => toTemplate(t, services.config.assetBaseUrl)),
        query,
      ),
    };
  },

  async listLandingPages({ query }, { tenant, services }) {
    const page = pageOf(query);
    const { rows, total } = await pages.listPages(tenant, query.status, page);
    return {
      status: 200,
      body: paginated(
        rows.map((r) => toLandingPage(r, services.config.assetBaseUrl)),
        total,
        page,
      ),
    };
  },

  async createLandingPage({ body }, { tenant, services }) {
    return { status: 201, body: { data: toLandingPage(await pages.createPage(tenant, body), services.config.assetBaseUrl) } };
  },

  async getLandingPage({ path }, { tenant, services }) {
    return { status: 200, body: { data: toLandingPage(await pages.getPage(tenant, path.id), services.config.assetBaseUrl) } };
  },

  async updateLandingPage({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toLandingPage(await pages.updatePage(tenant, path.id, body), services.config.assetBaseUrl) } };
  },

  async deleteLandingPage({ path }, { tenant }) {
    await pages.deletePage(tenant, path.id);
    return { status: 200, body: { success: true as const, id: path.id } };
  },

  async publishLandingPage({ path }, { tenant, services }) {
    return {
      status: 200,
      body: { data: toLandingPage(await pages.applyAction(tenant, path.id, 'publish'), services.config.assetBaseUrl) },
    };
  },

  async unpublishLandingPage({ path }, { tenant, services }) {
    return {
      status: 200,
      body: { data: toLandingPage(await pages.applyAction(tenant, path.id, 'unpublish'), services.config.assetBaseUrl) },
    };
  },

  async listLandingPageSubmissions({ path, query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await pages.listSubmissions(tenant, path.id, page);
    return { status: 200, body: paginated(rows.map(toSubmission), total, page) };
  },
});
