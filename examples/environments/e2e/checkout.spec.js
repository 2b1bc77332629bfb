const { test, expect } = require('@playwright/test')

test('checkout', async ({ page }) => {
  await page.goto(`${process.env.BASE_URL}/cart`)
  await expect(page.getByRole('heading', { name: 'Your cart' })).toBeVisible()
})
