export const migratedSchemaPath: string;
export const MIGRATED_SCHEMA_BANNER: string;
export function withBanner(datamodel: string): string;
export function withoutBanner(text: string): string | null;
export function recordMigratedSchema(): void;
