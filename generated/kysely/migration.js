// Kysely 0.29.9, bundled by scripts/bundle-kysely.ts
import { M as isObject, a as Migrator, i as MIGRATION_LOCK_ID, k as isFunction, n as DEFAULT_MIGRATION_LOCK_TABLE, o as NO_MIGRATIONS, r as DEFAULT_MIGRATION_TABLE, t as DEFAULT_ALLOW_UNORDERED_MIGRATIONS } from "./migrator.js";
// node_modules/kysely/dist/migration/file-migration-provider.js
/**
* Reads all migrations from a folder.
*
* Loads `.js`, `.ts`, `.mjs`, `.mts`, `.cjs` and `.cts` files, excluding
* TypeScript declaration files. Loading TypeScript requires a runtime or
* loader that supports it. Subdirectories are not scanned.
*
* A module must export an `up` function, either as a named export or as part
* of a default export object. The filename without its extension is used as
* the migration name. See {@link FileMigrationProviderProps.onFileIgnored}
* to report files that aren't loaded.
*
* ### Examples
*
* ```ts
* import { promises as fs } from 'node:fs'
* import path from 'node:path'
* import { FileMigrationProvider } from 'kysely/migration'
*
* new FileMigrationProvider({
*   fs,
*   path,
*   migrationFolder: 'path/to/migrations/folder'
* })
* ```
*/
var FileMigrationProvider = class {
	#props;
	constructor(props) {
		this.#props = props;
	}
	async getMigrations() {
		const migrations = {};
		const files = await this.#props.fs.readdir(this.#props.migrationFolder);
		for (const fileName of files) {
			if (!this.hasExpectedExtension(fileName)) {
				this.#props.onFileIgnored?.(fileName, "Extension");
				continue;
			}
			const filePath = this.#props.path.join(this.#props.migrationFolder, fileName);
			const migration = this.#props.import ? await this.#props.import(filePath) : await import(
				/* webpackIgnore: true */
				filePath
);
			const migrationKey = fileName.substring(0, fileName.lastIndexOf("."));
			if (isMigration(migration?.default)) migrations[migrationKey] = migration.default;
			else if (isMigration(migration)) migrations[migrationKey] = migration;
			else this.#props.onFileIgnored?.(fileName, "NotMigration");
		}
		return migrations;
	}
	hasExpectedExtension(fileName) {
		return fileName.endsWith(".js") || fileName.endsWith(".ts") && !fileName.endsWith(".d.ts") || fileName.endsWith(".mjs") || fileName.endsWith(".mts") && !fileName.endsWith(".d.mts") || fileName.endsWith(".cjs") || fileName.endsWith(".cts") && !fileName.endsWith(".d.cts");
	}
};
function isMigration(obj) {
	return isObject(obj) && isFunction(obj.up);
}
export { DEFAULT_ALLOW_UNORDERED_MIGRATIONS, DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, FileMigrationProvider, MIGRATION_LOCK_ID, Migrator, NO_MIGRATIONS };
