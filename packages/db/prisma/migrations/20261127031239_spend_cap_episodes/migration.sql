-- AlterTable
ALTER TABLE "Org" ADD COLUMN     "spendCapReachedAt" TIMESTAMP(3);

