import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Workspace packages are consumed as TypeScript source.
  transpilePackages: ["@thaw/core", "@thaw/db", "@thaw/protocol"],
  // Node-only libraries stay out of the server bundle (pg, pino and @prisma/client are on
  // Next's default list already).
  serverExternalPackages: ["ioredis", "pg", "pino"],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default nextConfig;
