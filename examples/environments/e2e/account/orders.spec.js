const { test, expect } = require('@playwright/test')

test('order history', async ({ page }) => {
  await page.goto(`${process.env.BASE_URL}/account/orders`)
  await expect(page).toHaveTitle(/Orders/)
})
