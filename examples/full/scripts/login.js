const { expect, test } = require('@playwright/test')

test('log in', async ({ page }) => {
  await page.goto(`${process.env.BASE_URL}/login`)
  await page.getByLabel('Email').fill('monitor@example.com')
  await page.getByLabel('Password').fill(process.env.MONITOR_PASSWORD)
  await page.getByRole('button', { name: 'Log in' }).click()
  await expect(page.getByText('Welcome')).toBeVisible()
})
