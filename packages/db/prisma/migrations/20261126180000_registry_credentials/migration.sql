-- CreateEnum
CREATE TYPE "RegistryCredentialKind" AS ENUM ('basic', 'ecr', 'huggingface');

-- CreateTable
CREATE TABLE "RegistryCredential" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "registry" TEXT NOT NULL,
    "kind" "RegistryCredentialKind" NOT NULL,
    "username" TEXT NOT NULL,
    "sealedSecret" TEXT NOT NULL,
    "region" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RegistryCredential_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "RegistryCredential_orgId_registry_key" ON "RegistryCredential"("orgId", "registry");

-- AddForeignKey
ALTER TABLE "RegistryCredential" ADD CONSTRAINT "RegistryCredential_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;
