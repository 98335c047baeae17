import type { Metadata } from "next";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { getSessionUser } from "../../server/auth.ts";
import { SignInForm } from "./sign-in-form.tsx";

export const metadata: Metadata = { title: "Sign in · Thaw" };

export default async function SignInPage() {
  if (await getSessionUser(await headers())) redirect("/");
  return (
    <main className="auth-page">
      <section className="card auth-card" aria-labelledby="sign-in-title">
        <p className="brand">Thaw</p>
        <h1 id="sign-in-title">Sign in</h1>
        <p className="muted">Serverless GPU inference control plane.</p>
        <SignInForm />
      </section>
    </main>
  );
}
