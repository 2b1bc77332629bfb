import { defineConfig, devices } from '@playwright/test';

export default defineConfig({
  testDir: './tests',
  globalSetup: './global-setup.ts',
  timeout: 20_000,
  expect: { timeout: 3_000 },
  use: {
    baseURL: process.env.SHOP_URL ?? 'http://127.0.0.1:8080',
    storageState: '.auth/customer.json',
  },
  projects: [
    { name: 'desktop', use: { ...devices['Desktop Chrome'] } },
    { name: 'mobile', use: { ...devices['Pixel 5'] } },
  ],
});
