import { z } from "zod";

/**
 * THAW_WEBHOOK_TRUSTED_HOSTS: webhook receivers (`host` or `host:port`, comma-separated) the
 * operator trusts although their address is private — an internal receiver, or a test's on
 * 127.0.0.1 — and which may be plain http. Read by web (checked when a URL is set) and the
 * scheduler (checked again at send time). Unset: only https to public addresses.
 */
export const webhookTrustedHostsEnv = z
  .string()
  .default("")
  .transform((v) =>
    v
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z
        .string()
        .regex(
          /^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:]+\](:\d{1,5})?$/,
          "must be host or host:port, comma-separated",
        ),
    ),
  );
